CREATE TABLE "backfills" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "backfills_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"dag_id" text NOT NULL,
	"dag_version" integer NOT NULL,
	"shard" integer NOT NULL,
	"from_at" timestamp (6) with time zone NOT NULL,
	"to_at" timestamp (6) with time zone NOT NULL,
	"max_active_runs" integer NOT NULL,
	"mode" text NOT NULL,
	"state" text NOT NULL,
	"total_slots" integer NOT NULL,
	"next_slot_at" timestamp (6) with time zone,
	"created_runs" integer DEFAULT 0 NOT NULL,
	"skipped_slots" integer DEFAULT 0 NOT NULL,
	"requested_by" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp (6) with time zone,
	CONSTRAINT "backfills_range_check" CHECK ("backfills"."from_at" < "backfills"."to_at" and "backfills"."max_active_runs" >= 1 and "backfills"."total_slots" >= 1),
	CONSTRAINT "backfills_mode_check" CHECK ("backfills"."mode" in ('skip', 'rerun')),
	CONSTRAINT "backfills_state_check" CHECK ("backfills"."state" in ('running', 'done', 'cancelled'))
);
--> statement-breakpoint
ALTER TABLE "runs" DROP CONSTRAINT "runs_trigger_check";--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "backfill_id" bigint;--> statement-breakpoint
ALTER TABLE "backfills" ADD CONSTRAINT "backfills_dag_id_dags_id_fk" FOREIGN KEY ("dag_id") REFERENCES "public"."dags"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "backfills_open_idx" ON "backfills" USING btree ("shard","id") WHERE "backfills"."ended_at" is null;--> statement-breakpoint
CREATE INDEX "backfills_dag_idx" ON "backfills" USING btree ("dag_id","id");--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_backfill_id_backfills_id_fk" FOREIGN KEY ("backfill_id") REFERENCES "public"."backfills"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "runs_backfill_idx" ON "runs" USING btree ("backfill_id","state") WHERE "runs"."backfill_id" is not null;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_trigger_check" CHECK ("runs"."trigger" in ('schedule', 'manual', 'backfill', 'rerun'));