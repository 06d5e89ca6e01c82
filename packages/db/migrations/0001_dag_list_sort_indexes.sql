DROP INDEX "dags_updated_at_idx";--> statement-breakpoint
DROP INDEX "dags_next_run_at_idx";--> statement-breakpoint
CREATE INDEX "dags_updated_at_id_idx" ON "dags" USING btree ("updated_at","id");--> statement-breakpoint
CREATE INDEX "dags_next_run_at_id_idx" ON "dags" USING btree ("next_run_at","id");