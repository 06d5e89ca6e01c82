import { logSafeMessage } from '@fenceline/core';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { readWorkerConfig } from './config';
import { Worker } from './worker';
import { registeredTaskNames } from './task';
import { tracingFromEnv } from '@fenceline/telemetry';
import { jsonLogger, type LogLevel } from '@fenceline/telemetry/log';

async function main(): Promise<void> {
  const config = readWorkerConfig();
  const logger = jsonLogger({ service: 'worker', workerId: config.workerId });
  const log = (level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void => logger.log(level, msg, fields);
  // A user module registers named job types with defineTask() when it is imported.
  if (config.tasksModule) await import(pathToFileURL(resolve(config.tasksModule)).href);
  // Off unless an OTLP endpoint is configured (docs/traces.md).
  const telemetry = await tracingFromEnv('fenceline-worker');
  const worker = new Worker({ ...config, log, tracing: telemetry.tracing });
  await worker.start();
  log('info', 'worker started', {
    slots: config.slots,
    pool: config.pool,
    labels: config.labels,
    schedulers: config.schedulerUrls,
    shell: config.shell.allowed,
    tasks: registeredTaskNames(),
  });
  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log('info', 'shutting down: taking no new work', { signal });
    await worker.stop();
    log('info', 'worker stopped', { stats: worker.stats });
    await telemetry.shutdown().catch((err) => log('warn', 'could not export the last spans', { error: logSafeMessage(err) }));
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`worker failed: ${logSafeMessage(err)}\n`);
  process.exit(1);
});
