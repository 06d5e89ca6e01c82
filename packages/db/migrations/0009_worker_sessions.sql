CREATE TABLE "worker_credentials" (
	"id" text PRIMARY KEY NOT NULL,
	"pool" text NOT NULL,
	"secret_hash" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp (6) with time zone,
	"last_used_at" timestamp (6) with time zone
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "holder_session" text;--> statement-breakpoint
ALTER TABLE "workers" ADD COLUMN "session" text;--> statement-breakpoint
ALTER TABLE "workers" ADD COLUMN "credential_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "worker_credentials_secret_hash_key" ON "worker_credentials" USING btree ("secret_hash");