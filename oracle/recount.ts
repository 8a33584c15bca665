/**
 * The recount: the verdict's independent half. Run in its own process after the drain, it
 * re-reads the settled bucket in full, from scratch — it lists the prefix and fetches every
 * object, judging every line against the seed with the same definitions as the incremental
 * judge (oracle/tally.ts) — and writes recount.json (lib/evidence.ts Recount).
 *
 * It does not reuse the judge's results. A mutation cannot be seen in a single read, so for
 * mutations only it compares the settled bucket with the ledger the judge wrote, when given
 * one: each judged object (its first ledger line) that is now gone, or whose ETag or size
 * now differs from the judged version, counts 1. Without a ledger, mutations is 0.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { LedgerEntry, Recount } from '../lib/evidence.ts';
import { retry } from '../lib/retry.ts';
import { Generator } from './generator.ts';
import { ObjectStore, forEachPaged, type ListedObject, type StoreSettings } from './store.ts';
import { EventTally, judgeBody, type BodyJudgement } from './tally.ts';
import type { FindingsCollector } from './findings.ts';
import { JudgePool, defaultJudgeWorkers } from './judge-pool.ts';
import type { OracleSettings } from './run-settings.ts';

export interface RecountOptions {
  settings: OracleSettings;
  credentials: { accessKeyId: string; secretAccessKey: string };
  produced: readonly number[];
  ledgerPath?: string;
  concurrency?: number;
  requestTimeoutMs?: number;
  /** Attempts per request before giving up (transient errors only). Default 5. */
  attempts?: number;
  /** After each object: objects judged, and objects listed so far (the listing runs beside the GETs). */
  onProgress?: (objectsDone: number, objectsListed: number) => void;
  /** Keeps each object's runs and problems for findings.jsonl (oracle/findings.ts). */
  collector?: FindingsCollector;
  /**
   * Judge workers (oracle/judge-pool.ts): the lines are judged beside the fetching, in this
   * many worker threads; 0 judges them on this thread. Default: one a core beyond the
   * first, at most 4. Same definitions and results either way.
   */
  judgeWorkers?: number;
}

/**
 * Bytes of fetched bodies waiting for a judge worker at most: past it, the GETs wait for
 * the judges. Bounds the memory of the pipeline, not its results.
 */
export const JUDGE_BACKLOG_BYTES = 64 * 1024 * 1024;

export interface RecountResult {
  recount: Recount;
  findings: string[];
  /** The tally the recount built (the benchmark measures its memory). */
  tally: EventTally;
}

/** A store call retried on a retryable failure (QualError.canRetry), 0.5 s doubling to 8 s. */
function withRetry<T>(attempts: number, fn: () => Promise<T>): Promise<T> {
  return retry(fn, { attempts, backoff: { initialMs: 500, maxMs: 8_000 }, isRetryable: (err) => !!(err as { canRetry?: boolean }).canRetry });
}

export function readJudgedLedger(file: string): Map<string, LedgerEntry> {
  const judged = new Map<string, LedgerEntry>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as LedgerEntry;
    if (e.change === undefined && !judged.has(e.key)) judged.set(e.key, e);
  }
  return judged;
}

export async function recount(o: RecountOptions): Promise<RecountResult> {
  const t0 = Date.now();
  const s = o.settings;
  const storeSettings: StoreSettings = { endpoint: s.endpoint, region: s.region, ...o.credentials, requestTimeoutMs: o.requestTimeoutMs ?? 30_000 };
  const store = new ObjectStore(storeSettings, s.bucket);
  const tally = new EventTally(new Generator(s));
  const findings: string[] = [];
  const attempts = o.attempts ?? 5;
  const workers = o.judgeWorkers ?? defaultJudgeWorkers();
  const pool = workers > 0 ? new JudgePool(s, workers) : undefined;
  try {
    // The pipeline: the listing's pages feed the GETs as they arrive (pipelined listing);
    // a GET slot hands its body to a judge worker and fetches the next object at once, so
    // the GETs in flight stay at the concurrency while the workers judge (up to
    // JUDGE_BACKLOG_BYTES of bodies waiting); the marking stays on this thread.
    let done = 0;
    let listedSoFar = 0;
    const hidden: string[] = [];
    const current = new Map<string, { etag: string; size: number }>();
    const mark = (key: string, size: number, b: BodyJudgement) => {
      const j = tally.addJudged(key, size, b);
      o.collector?.add(key, b);
      if (j.firstProblem && findings.length < 100) findings.push(j.firstProblem);
      if (j.duplicates && findings.length < 100) findings.push(`${key}: ${j.duplicates} duplicate line(s)`);
      o.onProgress?.(++done, listedSoFar);
    };
    const judging = new Set<Promise<void>>();
    let backlog = 0;
    let judgeFailed: unknown;
    async function* pages(): AsyncGenerator<ListedObject[]> {
      let token: string | undefined;
      do {
        const t = token;
        const page = await withRetry(attempts, () => store.listPage(s.prefix, t));
        listedSoFar += page.visible.length;
        hidden.push(...page.hidden);
        yield page.visible;
        token = page.next;
      } while (token);
    }
    await forEachPaged(pages(), o.concurrency ?? 16, async (obj) => {
      while (pool && backlog > JUDGE_BACKLOG_BYTES && judgeFailed === undefined) await Promise.race(judging);
      if (judgeFailed !== undefined) throw judgeFailed;
      const got = await withRetry(attempts, () => store.get(obj.key));
      if (!got) {
        findings.push(`${obj.key}: listed but gone before it could be read`);
        return;
      }
      current.set(obj.key, { etag: got.etag, size: got.size });
      if (!pool) return mark(obj.key, got.size, judgeBody(tally.gen, obj.key, got.body));
      // The body is handed to a worker (and detached here); the slot goes on to the next GET.
      const size = got.size;
      backlog += size;
      const judged: Promise<void> = pool
        .judge(obj.key, got.body)
        .then((b) => mark(obj.key, size, b))
        .catch((err: unknown) => {
          judgeFailed ??= err;
        })
        .finally(() => {
          backlog -= size;
          judging.delete(judged);
        });
      judging.add(judged);
    });
    while (judging.size > 0) await Promise.all([...judging]);
    if (judgeFailed !== undefined) throw judgeFailed;
    if (o.ledgerPath && existsSync(o.ledgerPath)) {
      for (const [key, e] of readJudgedLedger(o.ledgerPath)) {
        const now = current.get(key);
        if (!now) {
          tally.mutations++;
          findings.push(`mutation: ${key} was judged (ETag ${e.etag}) and is gone`);
          o.collector?.addMutation(key, findings[findings.length - 1]!);
        } else if (now.etag !== e.etag || now.size !== e.size) {
          tally.mutations++;
          findings.push(`mutation: ${key} was judged as ETag ${e.etag}, ${e.size} bytes; now ${now.etag}, ${now.size} bytes`);
          o.collector?.addMutation(key, findings[findings.length - 1]!);
        }
      }
    }
    // The bucket is settled and the produced counts final: a missing tail is a gap.
    const figures = tally.figures(o.produced, { settled: true });
    const recount: Recount = {
      t: new Date().toISOString(),
      objects: tally.objects,
      lines: tally.lines,
      distinctEvents: tally.distinct,
      bytes: tally.bytes,
      counters: tally.counters(o.produced, { settled: true }),
      perPartition: figures.map((f) => ({ partition: f.partition, produced: f.produced, distinct: f.distinct, highestSeq: f.highestSeq })),
      durationS: Math.round((Date.now() - t0) / 10) / 100,
      ...(hidden.length ? { hiddenObjects: hidden.length } : {}),
    };
    return { recount, findings, tally };
  } finally {
    store.destroy();
    await pool?.close();
  }
}
