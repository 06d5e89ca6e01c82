ALTER TABLE "job_attempts" ADD COLUMN "effects" jsonb;--> statement-breakpoint
ALTER TABLE "results" ADD COLUMN "effects" jsonb;