/**
 * The two small files through which a campaign run tells the recount what to judge.
 *
 * RUN_DIR/campaign.resolved.json — the resolved campaign. The recount reads the oracle's
 * settings from its `oracle` object, or, when there is none, from its top level:
 *
 *   {
 *     "oracle": {
 *       "seed": "qual03",            // the generator's seed (a string; numbers are accepted)
 *       "partitions": 4,             // input partitions, p in [0, partitions)
 *       "keys": 50000,               // distinct keys
 *       "bucket": "clink-qual",      // output bucket
 *       "prefix": "runs/qual03/",    // output prefix ('' for the whole bucket)
 *       "endpoint": "http://10.203.0.18:9000",
 *       "region": "us-east-1"        // optional, default us-east-1
 *     },
 *     ...anything else the campaign keeps
 *   }
 *
 * RUN_DIR/produced.json — what the generator produced (acknowledged by Kafka), written by
 * the campaign after the input stopped:
 *
 *   { "perPartition": [1869300, 1869300, 1869300, 1869300] }
 *
 * Credentials never live in either file: the recount takes AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY, or the rig's credentials file.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import { EVIDENCE } from '../lib/run-store.ts';

export interface OracleSettings {
  seed: string;
  partitions: number;
  keys: number;
  bucket: string;
  prefix: string;
  endpoint: string;
  region?: string;
}

export interface ProducedCounts {
  perPartition: number[];
}

export const RESOLVED_CAMPAIGN_FILE = EVIDENCE.campaign.file;
export const PRODUCED_FILE = EVIDENCE.produced.file;

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new QualError('BAD_INPUT_FILE', `${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new QualError('BAD_INPUT_FILE', `${file}: not valid JSON (${(err as Error).message})`);
  }
}

/** Checks and normalises oracle settings; `where` names the source in errors. */
export function checkOracleSettings(raw: Record<string, unknown>, where: string): OracleSettings {
  const bad = (field: string, want: string) => new QualError('BAD_INPUT_FILE', `${where}: field '${field}' must be ${want} (got ${JSON.stringify(raw[field])})`);
  const seed = raw.seed;
  if (typeof seed !== 'string' && typeof seed !== 'number') throw bad('seed', 'a string');
  const int = (f: string) => {
    const v = raw[f];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw bad(f, 'a positive integer');
    return v;
  };
  const str = (f: string, allowEmpty = false) => {
    const v = raw[f];
    if (typeof v !== 'string' || (!allowEmpty && v === '')) throw bad(f, 'a non-empty string');
    return v;
  };
  const region = raw.region;
  if (region !== undefined && typeof region !== 'string') throw bad('region', 'a string');
  return { seed: String(seed), partitions: int('partitions'), keys: int('keys'), bucket: str('bucket'), prefix: raw.prefix === undefined ? '' : str('prefix', true), endpoint: str('endpoint'), ...(region ? { region } : {}) };
}

export function readOracleSettings(runDir: string): OracleSettings {
  const file = path.join(runDir, RESOLVED_CAMPAIGN_FILE);
  const j = readJson(file);
  if (!j || typeof j !== 'object') throw new QualError('BAD_INPUT_FILE', `${file}: not a JSON object`);
  const o = (j as Record<string, unknown>).oracle;
  return checkOracleSettings((o && typeof o === 'object' ? o : j) as Record<string, unknown>, file);
}

export function checkProduced(v: unknown, partitions: number, where: string): number[] {
  if (!Array.isArray(v) || v.length !== partitions || !v.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)) {
    throw new QualError('BAD_INPUT_FILE', `${where}: perPartition must be ${partitions} non-negative integers (got ${JSON.stringify(v)?.slice(0, 200)})`);
  }
  return v as number[];
}

export function readProduced(runDir: string, partitions: number): number[] {
  const file = path.join(runDir, PRODUCED_FILE);
  const j = readJson(file) as ProducedCounts | null;
  return checkProduced(j?.perPartition, partitions, file);
}
