CREATE TABLE "store_lineage" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"timeline" integer NOT NULL,
	"fencings" bigint DEFAULT 0 NOT NULL,
	"changed_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "store_lineage_single_row" CHECK ("store_lineage"."id" = 1)
);
