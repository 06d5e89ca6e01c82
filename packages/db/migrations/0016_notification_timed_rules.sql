ALTER TABLE "notification_rules" DROP CONSTRAINT "notification_rules_event_check";--> statement-breakpoint
ALTER TABLE "notifications" ALTER COLUMN "dag_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "notification_rules" ADD COLUMN "after_seconds" integer;--> statement-breakpoint
ALTER TABLE "notification_rules" ADD COLUMN "pool" text;--> statement-breakpoint
ALTER TABLE "notification_rules" ADD CONSTRAINT "notification_rules_event_check" CHECK ("notification_rules"."event" in ('run_failed', 'task_failed', 'run_recovered', 'deadline_missed', 'shard_leaderless', 'pool_no_worker'));