CREATE TABLE "scheduler_nodes" (
	"id" text PRIMARY KEY NOT NULL,
	"last_seen" timestamp (6) with time zone NOT NULL,
	"started_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
