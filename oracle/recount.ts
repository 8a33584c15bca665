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
 *
 * The held pass (`held`: campaigns/runner/held-recount.ts) reads the bucket while faults held
 * through the recount are still in force (a committed object rotten on the store's disk). It
 * does not fail on an object the store will not serve: it records it with the store's answer
 * (after the same retries, it asks once more without the response checksum check, so that
 * the store's own error code, HTTP status and message are recorded, or the bytes it serves an
 * unchecking reader), and records every object
 * whose bytes differ from the version the oracle judged (ETag or size against the ledger), or
 * from the MD5 a held fault read before it rotted the object, and every object a held fault
 * rotted whatever the store served (HeldStoreAnswer). Its counters are not the verdict's: the
 * verdict's recount reads the bucket again once the held faults are healed.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { HeldStoreAnswer, LedgerEntry, Recount } from '../lib/evidence.ts';
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
  /**
   * The held pass: the objects the held faults rotted (each with the fault's id and the MD5 it
   * read before the rot, when it did). With it, an object the store will not serve is recorded
   * in storeAnswers instead of failing the recount.
   */
  held?: { watch: readonly { faultId: string; key: string; originalMd5?: string | null }[] };
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
  /** The held pass's record (RecountOptions.held): each object refused, differing, or rotted by a held fault; absent otherwise. */
  storeAnswers?: HeldStoreAnswer[];
}

/**
 * What the store serves a reader that does not check the response's CRC32 (most S3 clients;
 * the AWS SDK's default checks it when the store sends one, and then reports a checksum
 * mismatch instead of the store's own error code): its bytes' size and MD5, or its error.
 */
async function uncheckedAnswer(client: S3Client, bucket: string, key: string, timeoutMs: number): Promise<Pick<HeldStoreAnswer, 'answered' | 'name' | 'httpStatus' | 'message' | 'size' | 'md5' | 'etag'>> {
  try {
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: AbortSignal.timeout(timeoutMs) });
    const body = Buffer.from(await got.Body!.transformToByteArray());
    return { answered: 'bytes', size: body.length, md5: createHash('md5').update(body).digest('hex'), etag: (got.ETag ?? '').replace(/^"|"$/g, '') };
  } catch (err) {
    return { answered: 'error', ...refusal(err) };
  }
}

/** What the store's refusal of an object says, from the recount's error (its cause is the S3 client's). */
export function refusal(err: unknown): Pick<HeldStoreAnswer, 'name' | 'httpStatus' | 'message'> {
  const cause = ((err as { cause?: unknown }).cause ?? err) as { name?: string; Code?: string; message?: string; $metadata?: { httpStatusCode?: number }; $response?: { headers?: Record<string, string> } };
  return { name: cause.Code ?? cause.name ?? 'Error', httpStatus: cause.$metadata?.httpStatusCode ?? null, message: String(cause.message ?? err).slice(0, 300) };
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
  const unchecked = o.held ? new S3Client({ endpoint: s.endpoint, region: s.region, forcePathStyle: true, credentials: o.credentials, maxAttempts: 1, responseChecksumValidation: 'WHEN_REQUIRED' }) : undefined;
  try {
    // The pipeline: the listing's pages feed the GETs as they arrive (pipelined listing);
    // a GET slot hands its body to a judge worker and fetches the next object at once, so
    // the GETs in flight stay at the concurrency while the workers judge (up to
    // JUDGE_BACKLOG_BYTES of bodies waiting); the marking stays on this thread.
    let done = 0;
    let listedSoFar = 0;
    const hidden: string[] = [];
    const current = new Map<string, { etag: string; size: number }>();
    const held = o.held ? new Map(o.held.watch.map((w) => [w.key, w])) : undefined;
    const judged = held && o.ledgerPath && existsSync(o.ledgerPath) ? readJudgedLedger(o.ledgerPath) : new Map<string, LedgerEntry>();
    const answers: HeldStoreAnswer[] = [];
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
      let got: Awaited<ReturnType<ObjectStore['get']>>;
      try {
        got = await withRetry(attempts, () => store.get(obj.key));
      } catch (err) {
        if (!held || !unchecked) throw err;
        // Asked again without the response checksum check: the store's own answer (its error code, or the bytes it serves).
        const w = held.get(obj.key);
        const answer = await uncheckedAnswer(unchecked, s.bucket, obj.key, storeSettings.requestTimeoutMs ?? 30_000);
        const matchesOriginal = answer.md5 && w?.originalMd5 ? answer.md5 === w.originalMd5 : undefined;
        answers.push({
          key: obj.key,
          ...(w ? { faultId: w.faultId } : {}),
          why: w ? ['unreadable', 'held'] : ['unreadable'],
          ...answer,
          ...(matchesOriginal !== undefined ? { matchesOriginal } : {}),
          recountError: (err as Error).message.slice(0, 300),
        });
        findings.push(`${obj.key}: the recount could not read it (${answer.answered === 'error' ? `the store answers ${answer.name}` : 'the store serves it unchecked'})`);
        return;
      }
      if (!got) {
        findings.push(`${obj.key}: listed but gone before it could be read`);
        return;
      }
      current.set(obj.key, { etag: got.etag, size: got.size });
      if (held) {
        const w = held.get(obj.key);
        const j = judged.get(obj.key);
        const md5 = createHash('md5').update(got.body).digest('hex');
        const matchesJudged = j ? j.etag === got.etag && j.size === got.size : undefined;
        const matchesOriginal = w?.originalMd5 ? w.originalMd5 === md5 : undefined;
        const why: HeldStoreAnswer['why'] = [...(matchesJudged === false || matchesOriginal === false ? (['differs'] as const) : []), ...(w ? (['held'] as const) : [])];
        if (why.length)
          answers.push({
            key: obj.key,
            ...(w ? { faultId: w.faultId } : {}),
            why,
            answered: 'bytes',
            size: got.size,
            etag: got.etag,
            md5,
            ...(j ? { judged: { etag: j.etag, size: j.size }, matchesJudged } : {}),
            ...(matchesOriginal !== undefined ? { matchesOriginal } : {}),
          });
      }
      if (!pool) return mark(obj.key, got.size, judgeBody(tally.gen, obj.key, got.body));
      // The body is handed to a worker (and detached here); the slot goes on to the next GET.
      const size = got.size;
      backlog += size;
      const judgement: Promise<void> = pool
        .judge(obj.key, got.body)
        .then((b) => mark(obj.key, size, b))
        .catch((err: unknown) => {
          judgeFailed ??= err;
        })
        .finally(() => {
          backlog -= size;
          judging.delete(judgement);
        });
      judging.add(judgement);
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
    // A held fault's object that is not even listed any more: said too, not left out.
    for (const w of held?.values() ?? []) if (!current.has(w.key) && !answers.some((a) => a.key === w.key)) answers.push({ key: w.key, faultId: w.faultId, why: ['unreadable', 'held'], answered: 'error', name: 'NotListed', httpStatus: null, message: `not listed under ${s.prefix}` });
    return { recount, findings, tally, ...(held ? { storeAnswers: answers.sort((a, b) => a.key.localeCompare(b.key)) } : {}) };
  } finally {
    unchecked?.destroy();
    store.destroy();
    await pool?.close();
  }
}
