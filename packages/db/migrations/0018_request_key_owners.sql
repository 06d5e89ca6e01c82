DROP INDEX "runs_dag_request_key_idx";--> statement-breakpoint
DROP INDEX "run_actions_request_key_idx";--> statement-breakpoint
DROP INDEX "backfills_dag_request_key_idx";--> statement-breakpoint
ALTER TABLE "dag_request_keys" DROP CONSTRAINT "dag_request_keys_dag_id_request_key_pk";--> statement-breakpoint
ALTER TABLE "dag_request_keys" ADD COLUMN "request_owner" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "dag_request_keys" ADD COLUMN "request_fingerprint" text;--> statement-breakpoint
ALTER TABLE "dag_request_keys" ADD CONSTRAINT "dag_request_keys_dag_id_request_owner_request_key_pk" PRIMARY KEY("dag_id","request_owner","request_key");--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "request_owner" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "request_fingerprint" text;--> statement-breakpoint
ALTER TABLE "run_actions" ADD COLUMN "request_owner" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "run_actions" ADD COLUMN "request_fingerprint" text;--> statement-breakpoint
ALTER TABLE "backfills" ADD COLUMN "request_owner" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "backfills" ADD COLUMN "request_fingerprint" text;--> statement-breakpoint
CREATE UNIQUE INDEX "runs_dag_request_key_idx" ON "runs" USING btree ("dag_id","request_owner","request_key") WHERE "runs"."request_key" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "run_actions_request_key_idx" ON "run_actions" USING btree ("run_id","request_owner","request_key") WHERE "run_actions"."request_key" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "backfills_dag_request_key_idx" ON "backfills" USING btree ("dag_id","request_owner","request_key") WHERE "backfills"."request_key" is not null;