/**
 * Clink's process entry point, bundled into one file (clink.mjs) and run on the rig's
 * hosts as `node clink.mjs coordinator|worker <config.json>`.
 */
import { readConfig } from './config.ts';
import { Coordinator } from './coordinator.ts';
import { Worker } from './worker.ts';
import { s3_2pc_sink } from './sink/s3-2pc-sink.ts';

async function main(argv: string[]): Promise<void> {
  const [role, configFile] = argv;
  if ((role !== 'coordinator' && role !== 'worker') || !configFile) {
    console.error('usage: clink.mjs coordinator|worker <config.json>');
    process.exit(254);
  }
  const cfg = readConfig(configFile);
  const log = (line: string): void => {
    process.stdout.write(`${new Date().toISOString()} ${line}\n`);
  };
  process.on('unhandledRejection', (err) => log(`clink ${role}: unhandled rejection: ${(err as Error)?.stack ?? String(err)}`));
  if (role === 'coordinator') {
    const c = new Coordinator(cfg, { log });
    await c.start();
    const shutdown = (): void => {
      void c.stop().finally(() => process.exit(0));
    };
    process.on('SIGTERM', shutdown);
    process.on('SIGINT', shutdown);
  } else {
    const w = new Worker(cfg, { sinkFactory: s3_2pc_sink, log });
    w.start();
    const shutdown = (): void => {
      void w.stop().finally(() => process.exit(0));
    };
    process.on('SIGTERM', shutdown);
    process.on('SIGINT', shutdown);
  }
}

main(process.argv.slice(2)).catch((err: Error) => {
  console.error(`clink: ${err.stack ?? err.message}`);
  process.exit(1);
});
