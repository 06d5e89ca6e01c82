CREATE TABLE "run_actions" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "run_actions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_id" bigint NOT NULL,
	"dag_id" text NOT NULL,
	"shard" integer NOT NULL,
	"kind" text NOT NULL,
	"task_ids" jsonb NOT NULL,
	"downstream" boolean DEFAULT false NOT NULL,
	"reason" text,
	"requested_by" text NOT NULL,
	"request_key" text,
	"state" text DEFAULT 'pending' NOT NULL,
	"result" jsonb,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"applied_at" timestamp (6) with time zone,
	CONSTRAINT "run_actions_kind_check" CHECK ("run_actions"."kind" in ('cancel', 'clear', 'retry_failed', 'mark_success', 'mark_failed')),
	CONSTRAINT "run_actions_state_check" CHECK ("run_actions"."state" in ('pending', 'applied'))
);
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_state_check";--> statement-breakpoint
ALTER TABLE "run_actions" ADD CONSTRAINT "run_actions_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "run_actions_pending_idx" ON "run_actions" USING btree ("shard","id") WHERE "run_actions"."state" = 'pending';--> statement-breakpoint
CREATE INDEX "run_actions_run_idx" ON "run_actions" USING btree ("run_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "run_actions_request_key_idx" ON "run_actions" USING btree ("run_id","request_key") WHERE "run_actions"."request_key" is not null;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_state_check" CHECK ("jobs"."state" in ('waiting', 'ready', 'leased', 'succeeded', 'failed', 'upstream_failed', 'skipped', 'cancelled'));