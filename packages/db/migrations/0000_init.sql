CREATE TABLE "dag_versions" (
	"dag_id" text NOT NULL,
	"version" integer NOT NULL,
	"spec" jsonb NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dag_versions_dag_id_version_pk" PRIMARY KEY("dag_id","version")
);
--> statement-breakpoint
CREATE TABLE "dags" (
	"id" text PRIMARY KEY NOT NULL,
	"shard" integer NOT NULL,
	"current_version" integer NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"next_run_at" timestamp (6) with time zone,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "jobs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_id" bigint NOT NULL,
	"dag_id" text NOT NULL,
	"shard" integer NOT NULL,
	"task_id" text NOT NULL,
	"state" text NOT NULL,
	"attempt" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer NOT NULL,
	"fence" bigint DEFAULT 0 NOT NULL,
	"holder" text,
	"lease_expires_at" timestamp (6) with time zone,
	"next_attempt_at" timestamp (6) with time zone,
	"priority" integer DEFAULT 0 NOT NULL,
	"retry_backoff_ms" integer NOT NULL,
	"retry_backoff_max_ms" integer NOT NULL,
	"timeout_ms" integer NOT NULL,
	"ready_at" timestamp (6) with time zone,
	"leased_at" timestamp (6) with time zone,
	"ended_at" timestamp (6) with time zone,
	"last_error" text,
	CONSTRAINT "jobs_run_task_key" UNIQUE("run_id","task_id"),
	CONSTRAINT "jobs_state_check" CHECK ("jobs"."state" in ('waiting', 'ready', 'leased', 'succeeded', 'failed', 'upstream_failed', 'cancelled')),
	CONSTRAINT "jobs_attempt_check" CHECK ("jobs"."attempt" >= 0 and "jobs"."max_attempts" >= 1),
	CONSTRAINT "jobs_leased_check" CHECK ("jobs"."state" <> 'leased' or ("jobs"."holder" is not null and "jobs"."lease_expires_at" is not null))
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "runs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"dag_id" text NOT NULL,
	"dag_version" integer NOT NULL,
	"shard" integer NOT NULL,
	"scheduled_at" timestamp (6) with time zone NOT NULL,
	"trigger" text NOT NULL,
	"state" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp (6) with time zone,
	"ended_at" timestamp (6) with time zone,
	CONSTRAINT "runs_dag_scheduled_at_key" UNIQUE("dag_id","scheduled_at"),
	CONSTRAINT "runs_state_check" CHECK ("runs"."state" in ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
	CONSTRAINT "runs_trigger_check" CHECK ("runs"."trigger" in ('schedule', 'manual'))
);
--> statement-breakpoint
CREATE TABLE "results" (
	"job_id" bigint PRIMARY KEY NOT NULL,
	"fence" bigint NOT NULL,
	"worker_id" text NOT NULL,
	"outcome" text NOT NULL,
	"output" jsonb,
	"error" text,
	"logs" text,
	"written_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "results_outcome_check" CHECK ("results"."outcome" in ('succeeded', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "cluster_config" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"shard_count" integer NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "cluster_config_single_row" CHECK ("cluster_config"."id" = 1),
	CONSTRAINT "cluster_config_shard_count_check" CHECK ("cluster_config"."shard_count" > 0)
);
--> statement-breakpoint
CREATE TABLE "shard_leases" (
	"shard" integer PRIMARY KEY NOT NULL,
	"holder" text,
	"epoch" bigint DEFAULT 0 NOT NULL,
	"expires_at" timestamp (6) with time zone,
	"acquired_at" timestamp (6) with time zone
);
--> statement-breakpoint
CREATE TABLE "workers" (
	"id" text PRIMARY KEY NOT NULL,
	"slots" integer NOT NULL,
	"node_id" text,
	"meta" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"started_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"last_seen" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"type" text NOT NULL,
	"shard" integer,
	"dag_id" text,
	"run_id" bigint,
	"job_id" bigint,
	"worker_id" text,
	"node_id" text,
	"fence" bigint,
	"epoch" bigint,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
ALTER TABLE "dag_versions" ADD CONSTRAINT "dag_versions_dag_id_dags_id_fk" FOREIGN KEY ("dag_id") REFERENCES "public"."dags"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_dag_id_dags_id_fk" FOREIGN KEY ("dag_id") REFERENCES "public"."dags"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_dag_version_fk" FOREIGN KEY ("dag_id","dag_version") REFERENCES "public"."dag_versions"("dag_id","version") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "results" ADD CONSTRAINT "results_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "dags_due_idx" ON "dags" USING btree ("shard","next_run_at") WHERE not "dags"."paused" and "dags"."next_run_at" is not null;--> statement-breakpoint
CREATE INDEX "dags_updated_at_idx" ON "dags" USING btree ("updated_at");--> statement-breakpoint
CREATE INDEX "dags_next_run_at_idx" ON "dags" USING btree ("next_run_at");--> statement-breakpoint
CREATE INDEX "jobs_leased_expiry_idx" ON "jobs" USING btree ("shard","lease_expires_at") WHERE "jobs"."state" = 'leased';--> statement-breakpoint
CREATE INDEX "jobs_leased_holder_idx" ON "jobs" USING btree ("holder") WHERE "jobs"."state" = 'leased';--> statement-breakpoint
CREATE INDEX "runs_shard_state_idx" ON "runs" USING btree ("shard","state");--> statement-breakpoint
CREATE INDEX "runs_dag_id_idx" ON "runs" USING btree ("dag_id","id");--> statement-breakpoint
CREATE INDEX "workers_last_seen_idx" ON "workers" USING btree ("last_seen");--> statement-breakpoint
CREATE INDEX "events_run_id_idx" ON "events" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "events_job_id_idx" ON "events" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "events_type_at_idx" ON "events" USING btree ("type","at");