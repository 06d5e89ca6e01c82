CREATE TABLE "audit_log" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_log_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"actor_kind" text NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"dag_id" text,
	"target" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"source" text NOT NULL,
	"user_agent" text
);
--> statement-breakpoint
CREATE INDEX "audit_log_dag_idx" ON "audit_log" USING btree ("dag_id","id");--> statement-breakpoint
CREATE INDEX "audit_log_actor_idx" ON "audit_log" USING btree ("actor","id");