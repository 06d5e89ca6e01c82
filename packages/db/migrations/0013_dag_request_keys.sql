CREATE TABLE "dag_request_keys" (
	"dag_id" text NOT NULL,
	"request_key" text NOT NULL,
	"version" integer NOT NULL,
	"created" boolean NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dag_request_keys_dag_id_request_key_pk" PRIMARY KEY("dag_id","request_key")
);
--> statement-breakpoint
ALTER TABLE "dag_request_keys" ADD CONSTRAINT "dag_request_keys_dag_id_dags_id_fk" FOREIGN KEY ("dag_id") REFERENCES "public"."dags"("id") ON DELETE cascade ON UPDATE no action;