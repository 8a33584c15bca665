/**
 * The configuration file each Clink process is started with (written by the plug, one per
 * host). Credentials are not in it: they sit in their own 0600 file named here.
 */
import { readFileSync } from 'node:fs';
import type { EngineJobSpec } from '../engine.ts';
import { CLINK_MUTANT_NAMES, isClinkMutant, type ClinkMutant } from './mutants/index.ts';

/** The job as the harness gave it (topic, partitions, bucket, prefix, interval, mutant), plus where this process runs. */
export interface ClinkConfig extends EngineJobSpec {
  /** One of Clink's mutants (readConfig refuses any other name); absent for the correct engine. */
  mutant?: ClinkMutant;
  /** This host's name (worker id for a worker). */
  host: string;
  /** <host dataDir>/clink: status, logs, faults, journal live here. */
  clinkDir: string;
  coordinator: { address: string; port: number };
  kafka: { bootstrap: string[] };
  s3: { endpoint: string; region: string; credentialsFile: string };
  /** Worker ids the coordinator waits for at (re)start before the first deploy. */
  expectedWorkers: string[];
  /** Coordinator: a worker silent this long is lost. Default 6000. */
  workerLossTimeoutMs?: number;
  /** Worker: no word from the coordinator this long → stop tasks (self-fencing). Default 4000. */
  fencingTimeoutMs?: number;
  /** Coordinator: a barrier not completed within this is abandoned. Default max(3 × interval, 30 s). */
  checkpointTimeoutMs?: number;
  /** Coordinator: how long to wait at (re)start for expected workers. Default 15000. */
  startupWaitMs?: number;
}

export function readConfig(file: string): ClinkConfig {
  const c = JSON.parse(readFileSync(file, 'utf8')) as ClinkConfig;
  for (const k of ['host', 'clinkDir', 'coordinator', 'kafka', 'topic', 'partitions', 'bucket', 'prefix', 'checkpointIntervalMs', 's3'] as const) {
    if (c[k] === undefined) throw new Error(`${file}: missing '${k}'`);
  }
  if ('mutant' in c && !isClinkMutant(c.mutant)) throw new Error(`${file}: unknown mutant '${String(c.mutant)}' (known: ${CLINK_MUTANT_NAMES.join(', ')})`);
  return c;
}

