import { closeSync, existsSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from '../../lib/cli.ts';
import { EXIT, QualError } from '../../lib/errors.ts';
import { COUNTER_NAMES, type ChaosRecord, type HeldRecount, type Recount } from '../../lib/evidence.ts';
import { recount } from '../../oracle/recount.ts';
import { FindingsCollector, attributeCauses, type PlaceOfKey, unplaced, findingsPathFor, firstSeenFromLedger, verifyOutPath, writeFindings } from '../../oracle/findings.ts';
import { checkOracleSettings, checkProduced, readOracleSettings, readProduced, type OracleSettings } from '../../oracle/run-settings.ts';
import { EVIDENCE } from '../../lib/run-store.ts';
import { readJsonl } from '../../lib/jsonl.ts';
import { ObjectStore } from '../../oracle/store.ts';

/**
 * Why a recount must not run (undefined when it may): the run's ledger lists judged objects
 * and the prefix is empty or its bucket is gone, so the store's data is not the run's any
 * more and a recount would call every judged object a mutation.
 */
export function objectsGone(ledgerObjects: number, listed: number | 'no bucket', where: string): string | undefined {
  if (ledgerObjects === 0 || (listed !== 'no bucket' && listed > 0)) return undefined;
  return [
    `the run's objects are gone: its ledger lists ${ledgerObjects} judged object${ledgerObjects === 1 ? '' : 's'}, and ${where} ${listed === 'no bucket' ? 'is in no bucket (the bucket does not exist)' : 'is empty'}.`,
    "A recount now would call every one of them a mutation, so none was made and nothing was written into the run.",
    "The store's data was removed ('rig down --purge', a fresh store, or a 'rig down' from before the data was kept). Verify against the store that holds the run's bucket (after 'rig up' on the same machine, which keeps it), or read the run's own recount.json.",
  ].join('\n');
}

/**
 * Why a recount against the rig's store must not run (undefined when it may): the run ran on
 * one store (provenance.json's store.name) and the rig now runs the other, or MinIO on the
 * other drive layout (store.drives: one drive or four; each layout has its own data
 * directory), which does not hold the run's bucket. Runs recorded before campaigns named a
 * store ran on MinIO, on one drive.
 */
export function otherStore(ranOn: string | undefined, running: string, ranDrives = 1, runningDrives = 1): string | undefined {
  const ran = ranOn ?? 'minio';
  if (ran === running && (ran !== 'minio' || ranDrives === runningDrives)) return undefined;
  if (ran === running) {
    const words = (n: number) => (n === 1 ? 'one drive' : `${n} drives`);
    return `the run ran on MinIO on ${words(ranDrives)} and the rig's MinIO runs on ${words(runningDrives)}: each layout keeps its own data, so the run's objects are not in this one. Switch the rig's store first (a campaign with 'store: { kind: minio, drives: ${ranDrives} }'), then verify again.`;
  }
  return `the run ran on ${ran} and the rig runs ${running}: each store keeps its own data, so the run's objects are not in this one. Switch the rig's store first ('rig up --store ${ran}', or a campaign with 'store: ${ran}'), then verify again.`;
}

/** provenance.json's store name and drives, or undefined (no file, no field). */
function storeOfRun(runDir: string): { name: string; drives: number } | undefined {
  try {
    const store = (JSON.parse(readFileSync(path.join(runDir, EVIDENCE.provenance.file), 'utf8')) as { store?: { name?: unknown; drives?: unknown } }).store;
    return typeof store?.name === 'string' ? { name: store.name, drives: typeof store.drives === 'number' ? store.drives : 1 } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The faults held through the recount and still in force, from a run's chaos log: each landed
 * with heldThroughRecount in its evidence (chaos/store-bitrot.ts, variant committed) and not
 * healed yet, with the object it rotted and the MD5 it read before the rot.
 */
export function heldFaultsOf(chaos: readonly ChaosRecord[]): { faultId: string; key: string; originalMd5: string | null }[] {
  const healed = new Set(chaos.filter((r) => r.phase === 'healed' || r.phase === 'heal-failed').map((r) => r.faultId));
  return chaos
    .filter((r) => r.phase === 'landed' && r.evidence?.heldThroughRecount === true && typeof r.evidence.key === 'string' && !healed.has(r.faultId))
    .map((r) => ({ faultId: r.faultId, key: r.evidence!.key as string, originalMd5: typeof r.evidence!.originalMd5 === 'string' ? r.evidence!.originalMd5 : null }));
}

/**
 * How the findings place an object (subtask, epoch, checkpoint): by the run's engine's
 * reading of its own keys (provenance.json's engine.name, Engine.placeOfObject); nothing
 * is placed without a run directory or when its engine is unknown.
 */
async function placeOfKeyFor(runDir: string | undefined): Promise<PlaceOfKey> {
  if (!runDir) return unplaced;
  let name: unknown;
  try {
    name = (JSON.parse(readFileSync(path.join(runDir, EVIDENCE.provenance.file), 'utf8')) as { engine?: { name?: unknown } }).engine?.name;
  } catch {
    return unplaced;
  }
  const { ENGINE_NAMES, loadEngine } = await import('../../engine/index.ts');
  if (typeof name !== 'string' || !ENGINE_NAMES.includes(name)) return unplaced;
  const engine = loadEngine(name);
  return engine.placeOfObject ? (key) => engine.placeOfObject!(key) : unplaced;
}

const command: Command = {
  name: 'verify',
  summary: 'Recount a settled bucket from scratch against a seed (a run dir, or explicit settings)',
  description: `Lists the output prefix, fetches every object and judges every line against the
generator's seed, from scratch, in this process: the verdict's independent recount.

With RUN_DIR: settings from RUN_DIR/campaign.resolved.json (its 'oracle' object: seed,
partitions, keys, bucket, prefix, endpoint), produced counts from RUN_DIR/produced.json
({"perPartition": [...]}), mutations checked against RUN_DIR/ledger.jsonl when present;
writes RUN_DIR/recount.json when the run has none yet, else a new
RUN_DIR/recount.verify-<UTC time>.json beside it (the run's stored recount is never
overwritten). Beside the recount it writes findings.jsonl (findings.verify-<time>.jsonl): one
line per anomaly, at most 20 per counter, each with its counter's total, the event, the
objects with line, subtask, epoch and checkpoint (from Clink's keys; null for other keys),
when the oracle first saw them, and for the first ones the faults that landed before the
object's checkpoint. Without RUN_DIR: give --endpoint, --bucket, --prefix, --seed,
--partitions, --keys and --produced; nothing is written unless --out is given.

Credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; when unset in RUN_DIR mode, the
live rig's store credentials. They are never printed.

Counters: duplicates (an event id seen again), gaps (sequences of a partition below its
produced count that are not committed: holes and a missing tail alike, so an empty bucket
with --produced 1,1,1,1 has 4 gaps), foreign (a line that is not a generated event of this seed and
range), corrupted (zero-byte or unparsable objects), mutations (judged objects changed or
gone, against the ledger), pastProduced (events at or beyond what was produced).
When the ledger lists judged objects and the prefix is empty (or the bucket is gone), the
store no longer holds the run: verify says so, recounts nothing and writes nothing (exit 2).`,
  exitCodes: '0 when every counter is zero, 1 otherwise, 2 the store could not be read or no longer holds the run\'s objects, 254 for bad arguments or files, 255 internal error.',
  positionals: [{ name: 'RUN_DIR', description: 'A run directory (runs/<run-id>)' }],
  options: {
    endpoint: { type: 'string', valueName: 'URL', description: 'S3 endpoint (standalone mode)' },
    bucket: { type: 'string', valueName: 'NAME', description: 'Bucket (standalone mode)' },
    prefix: { type: 'string', valueName: 'PREFIX', description: "Object key prefix (standalone mode; default '')" },
    region: { type: 'string', valueName: 'REGION', description: 'Region (standalone mode)', default: 'us-east-1' },
    seed: { type: 'string', valueName: 'SEED', description: "The generator's seed (standalone mode)" },
    partitions: { type: 'string', valueName: 'N', description: 'Input partitions (standalone mode)' },
    keys: { type: 'string', valueName: 'K', description: 'Distinct keys (standalone mode)' },
    produced: { type: 'string', valueName: 'n0,n1,...', description: 'Events produced per partition (standalone mode)' },
    ledger: { type: 'string', valueName: 'FILE', description: 'Ledger to check mutations against (default RUN_DIR/ledger.jsonl)' },
    out: { type: 'string', valueName: 'FILE', description: 'Where to write the recount (default RUN_DIR/recount.json, or RUN_DIR/recount.verify-<time>.json when the run has one); findings go beside it' },
    concurrency: { type: 'string', valueName: 'N', description: 'Parallel GETs', default: '16' },
    json: { type: 'boolean', description: 'Print the Recount as JSON' },
    held: {
      type: 'boolean',
      description: "The recount's held pass (RUN_DIR only; the campaign runner runs it): with the faults chaos.jsonl shows held through the recount still in force, record what the store answers for each object it would not serve, whose bytes differ from the judged version, or that a held fault rotted, in RUN_DIR/recount-held.json; exit 0 once written",
    },
  },
  examples: [
    'clink-qual verify runs/unknowns-20261204T221219-46b6',
    'clink-qual verify --endpoint http://127.0.0.1:9000 --bucket out --prefix run1/ --seed qual03 --partitions 4 --keys 50000 --produced 100,100,100,100',
  ],
  async run({ values, positionals }) {
    const runDir = positionals[0];
    const v = values as Record<string, string | boolean | undefined>;
    const int = (name: string, s: string | undefined): number => {
      const n = Number(s);
      if (s === undefined || !Number.isInteger(n) || n < 1) throw new QualError('BAD_ARGUMENTS', `--${name} must be a positive integer (got ${s ?? 'nothing'})`);
      return n;
    };
    const concurrency = int('concurrency', v.concurrency as string);
    let settings: OracleSettings;
    let produced: number[];
    let ledgerPath = v.ledger as string | undefined;
    let outPath = v.out as string | undefined;
    let credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
    if (process.env.AWS_ACCESS_KEY_ID && process.env.AWS_SECRET_ACCESS_KEY) {
      credentials = { accessKeyId: process.env.AWS_ACCESS_KEY_ID, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY };
    }
    if (runDir) {
      const standalone = ['endpoint', 'bucket', 'prefix', 'seed', 'partitions', 'keys', 'produced'].filter((k) => v[k] !== undefined);
      if (standalone.length) throw new QualError('BAD_ARGUMENTS', `give either RUN_DIR or the explicit settings, not both (--${standalone.join(', --')})`);
      if (!existsSync(runDir)) throw new QualError('BAD_ARGUMENTS', `no such run directory: ${runDir}`);
      settings = readOracleSettings(runDir);
      produced = readProduced(runDir, settings.partitions);
      ledgerPath ??= path.join(runDir, EVIDENCE.ledger.file);
      outPath ??= verifyOutPath(runDir);
      if (!credentials) {
        const { readRigState, readStoreCredentials } = await import('../../rig/state.ts');
        const { storeDrivesOf, storeKindOf } = await import('../../rig/store.ts');
        const rig = readRigState();
        const ran = storeOfRun(runDir);
        const wrong = otherStore(ran?.name, storeKindOf(rig.store), ran?.drives ?? 1, storeDrivesOf(rig.store));
        if (wrong) throw new QualError('PRECONDITION', wrong);
        credentials = readStoreCredentials(rig);
      }
    } else {
      const missing = ['endpoint', 'bucket', 'seed', 'partitions', 'keys', 'produced'].filter((k) => v[k] === undefined);
      if (missing.length) throw new QualError('BAD_ARGUMENTS', `without RUN_DIR, give --${missing.join(', --')}\nRun 'clink-qual verify --help' for usage.`);
      try {
        settings = checkOracleSettings(
          { seed: v.seed, partitions: Number(v.partitions), keys: Number(v.keys), bucket: v.bucket, prefix: v.prefix ?? '', endpoint: v.endpoint, region: v.region },
          'arguments',
        );
        produced = checkProduced(String(v.produced).split(',').map((x) => (x.trim() === '' ? NaN : Number(x))), settings.partitions, '--produced');
      } catch (err) {
        throw new QualError('BAD_ARGUMENTS', (err as Error).message.replace(/field '(\w+)'/, '--$1'));
      }
      if (!credentials) throw new QualError('BAD_ARGUMENTS', 'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
    }
    // A recount can take minutes: a place it cannot write to is said now (254), not after it.
    if (outPath) for (const [file, what] of [[outPath, '--out'], [findingsPathFor(outPath), '--out (its findings file)']] as const) checkWritable(file, what);
    if (ledgerPath) {
      const ledgerObjects = new Set(readJsonl<{ key: string }>(ledgerPath).map((e) => e.key)).size;
      if (ledgerObjects > 0) {
        const store = new ObjectStore({ endpoint: settings.endpoint, region: settings.region, ...credentials }, settings.bucket);
        let listed: number | 'no bucket';
        try {
          listed = (await store.list(settings.prefix)).length;
        } catch (err) {
          if ((err as { cause?: { name?: string } }).cause?.name !== 'NoSuchBucket') throw err;
          listed = 'no bucket';
        } finally {
          store.client.destroy();
        }
        const gone = objectsGone(ledgerObjects, listed, `s3://${settings.bucket}/${settings.prefix}`);
        if (gone) throw new QualError('PRECONDITION', gone);
      }
    }
    if (v.held) {
      if (!runDir) throw new QualError('BAD_ARGUMENTS', '--held needs RUN_DIR (the held faults are read from its chaos.jsonl)');
      const watch = heldFaultsOf(readJsonl<ChaosRecord>(path.join(runDir, EVIDENCE.chaos.file)));
      const t0 = Date.now();
      const held = await recount({ settings, credentials, produced, ledgerPath, concurrency, held: { watch } });
      const out: HeldRecount = { t: new Date().toISOString(), held: watch.map((w) => ({ faultId: w.faultId, key: w.key })), objects: held.recount.objects + (held.storeAnswers ?? []).filter((a) => a.answered === 'error').length, answers: held.storeAnswers ?? [], durationS: Math.round((Date.now() - t0) / 10) / 100 };
      writeFileSync(path.join(runDir, EVIDENCE.recountHeld.file), JSON.stringify(out, null, 2) + '\n');
      console.log(v.json ? JSON.stringify(out, null, 2) : `held pass: ${out.answers.length} object(s) recorded (${out.held.length} held fault(s)); written ${path.join(runDir, EVIDENCE.recountHeld.file)}`);
      return EXIT.ok;
    }
    const collector = new FindingsCollector(undefined, await placeOfKeyFor(runDir));
    const { recount: r, findings } = await recount({ settings, credentials, produced, ledgerPath, concurrency, collector });
    if (outPath) writeFileSync(outPath, JSON.stringify(r, null, 2) + '\n');
    if (outPath) {
      const found = collector.finish(r.counters, produced, ledgerPath ? firstSeenFromLedger(ledgerPath) : undefined);
      writeFindings(findingsPathFor(outPath), runDir ? attributeCauses(found, runDir) : found);
    }
    const clean = COUNTER_NAMES.every((c) => r.counters[c] === 0);
    if (v.json) console.log(JSON.stringify(r, null, 2));
    else console.log(renderTable(settings, r, findings, outPath));
    return clean ? EXIT.ok : EXIT.fail;
  },
};
export default command;

/**
 * Throws QualError('BAD_ARGUMENTS') naming `what` when `file` cannot be written: its folder
 * is missing or read-only, or it is a directory. Opens it for appending (which changes
 * nothing in a file that exists) and removes it again when it did not exist.
 */
export function checkWritable(file: string, what: string): void {
  const existed = existsSync(file);
  try {
    closeSync(openSync(file, 'a'));
    if (!existed) unlinkSync(file);
  } catch (err) {
    throw new QualError('BAD_ARGUMENTS', `${what}: cannot write ${file}: ${(err as Error).message}`);
  }
}

function renderTable(s: OracleSettings, r: Recount, findings: string[], outPath: string | undefined): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const produced = r.perPartition.reduce((a, p) => a + p.produced, 0);
  const rows: [string, string][] = [
    ['Bucket', `s3://${s.bucket}/${s.prefix}`],
    ['Seed', `${s.seed} (${s.partitions} partitions, ${n(s.keys)} keys)`],
    ['Objects read', n(r.objects)],
    ['Lines', n(r.lines)],
    ['Bytes', n(r.bytes)],
    ['Events produced', n(produced)],
    ['Distinct events committed', n(r.distinctEvents)],
    ...COUNTER_NAMES.map((c) => [c, n(r.counters[c])] as [string, string]),
    ['Duration', `${r.durationS} s`],
  ];
  const lines = rows.map(([k, val]) => `${k.padEnd(28)} ${val}`);
  lines.push('', 'partition  produced     distinct     highest seq');
  for (const p of r.perPartition) lines.push(`${String(p.partition).padEnd(10)} ${n(p.produced).padEnd(12)} ${n(p.distinct).padEnd(12)} ${p.highestSeq}`);
  if (findings.length) {
    lines.push('', 'Findings (first ones):');
    for (const f of findings.slice(0, 20)) lines.push(`  ${f}`);
  }
  const clean = COUNTER_NAMES.every((c) => r.counters[c] === 0);
  lines.push('', clean ? 'CLEAN: every counter is zero.' : `NOT CLEAN: ${COUNTER_NAMES.filter((c) => r.counters[c] > 0).join(', ')}.`);
  if (outPath) lines.push(`Written: ${outPath}`);
  return lines.join('\n');
}
