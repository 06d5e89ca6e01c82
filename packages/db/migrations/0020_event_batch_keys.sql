CREATE TABLE "event_batches" (
	"key" text PRIMARY KEY NOT NULL,
	"at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
