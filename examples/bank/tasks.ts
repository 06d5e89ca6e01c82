import postgres from 'postgres';
import { defineTask, NonRetryableError } from '@fenceline/worker';
import { fencedTransaction } from '@fenceline/effects';

/**
 * The bank example's job type: `transfer` moves `amount` from one account to another in
 * the bank's own database (BANK_DATABASE_URL), exactly once per task of a run, however
 * often workers pause, die or retry it. The transfer's rows and the ledger row of its
 * effect key commit in one transaction (docs/effects.md).
 */
const url = process.env.BANK_DATABASE_URL;
const sql = url ? postgres(url, { max: 2, onnotice: () => undefined }) : null;

defineTask('transfer', async (input, ctx) => {
  if (!sql) throw new NonRetryableError('BANK_DATABASE_URL is not set');
  const { from, to } = input;
  const amount = Number(input.amount);
  if (typeof from !== 'string' || typeof to !== 'string' || from === to) throw new NonRetryableError('from and to must name two different accounts');
  if (!Number.isInteger(amount) || amount <= 0) throw new NonRetryableError('amount must be a whole number above 0');
  // The bank's checks take a while: long enough for a paused worker to lose its lease here.
  await new Promise((resolve) => setTimeout(resolve, Number(input.checkMs ?? 800)));
  const r = await fencedTransaction(sql, ctx, async (tx) => {
    await tx`update accounts set balance = balance - ${amount} where id = ${from}`;
    await tx`update accounts set balance = balance + ${amount} where id = ${to}`;
    await tx`insert into transfers (key, from_account, to_account, amount, fence) values (${ctx.effectKey}, ${from}, ${to}, ${amount}, ${ctx.fence})`;
  });
  ctx.log(`transfer ${amount} ${from} -> ${to}: ${r.outcome}`);
  return { effect: r.outcome };
});
