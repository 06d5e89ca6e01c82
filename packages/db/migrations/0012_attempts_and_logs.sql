CREATE TABLE "job_attempts" (
	"job_id" bigint NOT NULL,
	"fence" bigint NOT NULL,
	"attempt" integer NOT NULL,
	"worker_id" text NOT NULL,
	"outcome" text NOT NULL,
	"output" jsonb,
	"error" text,
	"logs" text,
	"started_at" timestamp (6) with time zone,
	"ended_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "job_attempts_pk" PRIMARY KEY("job_id","fence"),
	CONSTRAINT "job_attempts_outcome_check" CHECK ("job_attempts"."outcome" in ('succeeded', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "job_log_chunks" (
	"job_id" bigint NOT NULL,
	"fence" bigint NOT NULL,
	"seq" integer NOT NULL,
	"text" text NOT NULL,
	"written_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "job_log_chunks_pk" PRIMARY KEY("job_id","fence","seq")
);
--> statement-breakpoint
ALTER TABLE "job_attempts" ADD CONSTRAINT "job_attempts_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_log_chunks" ADD CONSTRAINT "job_log_chunks_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "runs_scheduled_at_id_idx" ON "runs" USING btree ("scheduled_at","id");--> statement-breakpoint
CREATE INDEX "runs_state_scheduled_at_idx" ON "runs" USING btree ("state","scheduled_at","id");