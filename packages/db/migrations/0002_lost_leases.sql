ALTER TABLE "jobs" ADD COLUMN "renewed_at" timestamp (6) with time zone;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "lost_leases" integer DEFAULT 0 NOT NULL;