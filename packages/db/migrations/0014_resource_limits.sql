CREATE TABLE "resource_holds" (
	"job_id" bigint NOT NULL,
	"name" text NOT NULL,
	"fence" bigint NOT NULL,
	"units" integer NOT NULL,
	CONSTRAINT "resource_holds_pkey" PRIMARY KEY("job_id","name"),
	CONSTRAINT "resource_holds_units_check" CHECK ("resource_holds"."units" >= 1)
);
--> statement-breakpoint
CREATE TABLE "resource_limits" (
	"name" text PRIMARY KEY NOT NULL,
	"capacity" integer NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "resource_limits_capacity_check" CHECK ("resource_limits"."capacity" >= 1)
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "resources" jsonb;--> statement-breakpoint
ALTER TABLE "resource_holds" ADD CONSTRAINT "resource_holds_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "jobs_ready_limited_idx" ON "jobs" USING btree ("shard") WHERE "jobs"."state" = 'ready' and "jobs"."resources" is not null;