ALTER TABLE "runs" DROP CONSTRAINT "runs_dag_version_fk";--> statement-breakpoint
-- Written by hand (drizzle cannot declare a deferrable key): the DAG's head must name a
-- stored version. Deferred to commit, because a new DAG's head row goes in before its
-- first version (which references the head).
ALTER TABLE "dags" ADD CONSTRAINT "dags_current_version_fk" FOREIGN KEY ("id", "current_version") REFERENCES "dag_versions" ("dag_id", "version") DEFERRABLE INITIALLY DEFERRED;
