import type { Sql } from 'postgres';

/**
 * SQL that drizzle-kit cannot generate: a trigger on audit_log that refuses UPDATE, DELETE
 * and TRUNCATE, so no path through the product (nor a bug in one) can rewrite history.
 * It is idempotent and runs after the generated migrations, under their advisory lock. An
 * owner of the database can still drop the trigger; that is PostgreSQL's access control,
 * not the product's.
 */
export async function installAuditLogGuard(client: Sql): Promise<void> {
  await client.unsafe(`
    create or replace function fenceline_audit_log_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit_log is append-only: % refused', tg_op using errcode = 'insufficient_privilege';
    end
    $$;
    drop trigger if exists audit_log_append_only on audit_log;
    create trigger audit_log_append_only before update or delete on audit_log
      for each row execute function fenceline_audit_log_append_only();
    drop trigger if exists audit_log_no_truncate on audit_log;
    create trigger audit_log_no_truncate before truncate on audit_log
      for each statement execute function fenceline_audit_log_append_only();
  `);
}
