/**
 * The input audit: reads the input topic back in full and reports what is wrong with the
 * input itself, apart from anything the engine did. For each partition p, the record at
 * offset o must be the canonical line of event (p, seq = o):
 *
 *   duplicates  a record whose (p, seq) already appeared earlier in the partition
 *   holes       sequences below the partition's highest seq that never appeared
 *   mismatched  a record that is not a generated event of this seed and partition
 *               (foreign, garbage, or an event of another partition)
 *   misplaced   a valid event whose seq differs from its offset (the producer's invariant)
 *
 * A clean input has all four at zero and exactly endOffset[p] records in each partition.
 *
 * Two ways to run it, with the same checks:
 * - `auditInput`: once, after the input has stopped (the end offsets read first, then every
 *   record below them).
 * - `InputAuditor`: tails the topic from offset 0 while the run produces (started with the
 *   producer), so that when the input stops only its last records are left to read;
 *   `finish()` then reads the end offsets and waits until every record below them has been
 *   judged. A campaign runs this one: at QUAL-03's scale the after-the-run read of 8.26 M
 *   records took 3 min 24 s. Every record from offset 0 to the end is still read and
 *   judged exactly once: the tail keeps the next offset of each partition, re-opens its
 *   stream from there after an error (a broker restart) or a stall, and never counts an
 *   offset below it twice.
 */
import { Admin, Consumer, MessagesStreamModes, stringDeserializers, type MessagesStream } from '@platformatic/kafka';
import { Backoff, poll } from '../lib/retry.ts';
import { sleep } from '../lib/sleep.ts';
import { GrowableBitset } from './bitset.ts';
import { Generator, judgeLine, type GeneratorSpec } from './generator.ts';
import { endOffsets } from './producer.ts';

export interface InputAuditOptions extends GeneratorSpec {
  bootstrap: string | string[];
  topic: string;
  /** Give up after this long. Default 10 min. */
  timeoutMs?: number;
}

export interface PartitionAudit {
  partition: number;
  records: number;
  endOffset: number;
  duplicates: number;
  holes: number;
  mismatched: number;
  misplaced: number;
}

export interface InputAudit {
  topic: string;
  records: number;
  duplicates: number;
  holes: number;
  mismatched: number;
  misplaced: number;
  perPartition: PartitionAudit[];
  /** First few findings, for people. */
  findings: string[];
  clean: boolean;
  /** Set when the topic was tailed during the run: the records still unread when finish() was called, and how long finishing took. */
  tail?: { leftAtFinish: number; finishMs: number; reopened: number };
}

/**
 * The audit's counting, apart from Kafka: each partition's records fed in offset order.
 * An offset below the partition's next one was counted already (a stream re-opened after an
 * error may deliver it again) and is skipped; an offset at or past the partition's limit,
 * when one is set, is not part of the audit.
 */
export class InputAuditTally {
  readonly #gen: Generator;
  readonly #partitions: number;
  readonly #seen: GrowableBitset[];
  readonly per: PartitionAudit[];
  /** The next offset to read in each partition. */
  readonly next: number[];
  readonly findings: string[] = [];
  limit: number[] | undefined;
  read = 0;

  constructor(spec: GeneratorSpec, limit?: number[]) {
    this.#gen = new Generator(spec);
    this.#partitions = spec.partitions;
    this.#seen = Array.from({ length: spec.partitions }, () => new GrowableBitset());
    this.per = Array.from({ length: spec.partitions }, (_, partition) => ({ partition, records: 0, endOffset: 0, duplicates: 0, holes: 0, mismatched: 0, misplaced: 0 }));
    this.next = new Array<number>(spec.partitions).fill(0);
    this.limit = limit;
  }

  #note(s: string): void {
    if (this.findings.length < 50) this.findings.push(s);
  }

  add(p: number, offset: number, value: string): void {
    if (p < 0 || p >= this.#partitions || offset < this.next[p]!) return;
    if (this.limit && offset >= this.limit[p]!) return;
    this.next[p] = offset + 1;
    this.read++;
    const a = this.per[p]!;
    a.records++;
    const v = judgeLine(this.#gen, value);
    if (v.kind !== 'event' || v.p !== p) {
      a.mismatched++;
      this.#note(`partition ${p} offset ${offset}: not a generated event of this partition`);
      return;
    }
    if (v.seq !== offset) {
      a.misplaced++;
      this.#note(`partition ${p} offset ${offset}: holds seq ${v.seq}`);
    }
    if (!this.#seen[p]!.testAndSet(v.seq)) {
      a.duplicates++;
      this.#note(`partition ${p} offset ${offset}: seq ${v.seq} again`);
    }
  }

  /** True once every partition has been read up to its end offset. */
  caughtUp(ends: readonly number[]): boolean {
    return ends.every((e, p) => this.next[p]! >= e);
  }

  /** The audit against the partitions' end offsets. */
  result(topic: string, ends: readonly number[]): InputAudit {
    const per = this.per.map((a) => ({ ...a, endOffset: ends[a.partition] ?? 0 }));
    const findings = [...this.findings];
    for (const a of per) {
      const bits = this.#seen[a.partition]!;
      const h = bits.highest;
      a.holes = h + 1 - bits.countRange(0, h + 1);
      if (a.holes && findings.length < 50) findings.push(`partition ${a.partition}: ${a.holes} sequence(s) missing below ${h}`);
      if (a.records !== a.endOffset && findings.length < 50) findings.push(`partition ${a.partition}: read ${a.records} records, end offset ${a.endOffset}`);
    }
    const sum = (k: 'records' | 'duplicates' | 'holes' | 'mismatched' | 'misplaced') => per.reduce((x, a) => x + a[k], 0);
    const res: InputAudit = {
      topic,
      records: sum('records'),
      duplicates: sum('duplicates'),
      holes: sum('holes'),
      mismatched: sum('mismatched'),
      misplaced: sum('misplaced'),
      perPartition: per,
      findings,
      clean: false,
    };
    res.clean = res.duplicates === 0 && res.holes === 0 && res.mismatched === 0 && res.misplaced === 0 && per.every((a) => a.records === a.endOffset);
    return res;
  }
}

function brokersOf(bootstrap: string | string[]): string[] {
  return (Array.isArray(bootstrap) ? bootstrap : bootstrap.split(',')).map((s) => s.trim()).filter(Boolean);
}

async function topicEnds(bootstrapBrokers: string[], topic: string, partitions: number): Promise<number[]> {
  const admin = new Admin({ clientId: 'clink-qual-audit-admin', bootstrapBrokers });
  try {
    return await endOffsets(admin, topic, partitions);
  } finally {
    await admin.close().catch(() => {});
  }
}

/** A stream that has delivered nothing for this long while records are still to be read is re-opened. */
const STALL_MS = 10_000;

export interface InputAuditorOptions extends InputAuditOptions {
  /** Told of each error that ended a stream (it is re-opened from the next offsets). */
  onError?: (err: Error) => void;
  /** Judge only the records below these end offsets (auditInput: the ends read before it starts). */
  limit?: number[];
}

/** Tails the input topic from offset 0 and judges each record as it arrives; see the file's comment. */
export class InputAuditor {
  readonly #o: InputAuditorOptions;
  readonly #brokers: string[];
  readonly tally: InputAuditTally;
  #loop: Promise<void> | null = null;
  #stream: MessagesStream<string, string, string, string> | null = null;
  #stopping = false;
  /** Set when the stream is ended on purpose (a stall), so its ending is no error. */
  #reopening = false;
  #lastReadAt = Date.now();
  /** Streams opened again after an error or a stall. */
  reopened = 0;

  constructor(o: InputAuditorOptions) {
    this.#o = o;
    this.#brokers = brokersOf(o.bootstrap);
    this.tally = new InputAuditTally(o, o.limit);
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async #run(): Promise<void> {
    const backoff = new Backoff({ initialMs: 250, maxMs: 5000 });
    while (!this.#stopping) {
      const consumer = new Consumer({
        clientId: 'clink-qual-audit',
        groupId: `clink-qual-audit-${process.pid}-${Date.now()}`,
        bootstrapBrokers: this.#brokers,
        deserializers: stringDeserializers,
        maxWaitTime: 500,
      });
      let failed = false;
      try {
        const stream = await consumer.consume({
          topics: [this.#o.topic],
          mode: MessagesStreamModes.MANUAL,
          offsets: this.tally.next.map((n, partition) => ({ topic: this.#o.topic, partition, offset: BigInt(n) })),
          autocommit: false,
        });
        this.#stream = stream;
        if (this.#stopping) break;
        for await (const m of stream) {
          this.tally.add(m.partition, Number(m.offset), String(m.value ?? ''));
          this.#lastReadAt = Date.now();
          backoff.reset();
          if (this.#stopping) break;
        }
      } catch (err) {
        failed = !this.#stopping && !this.#reopening;
        if (failed) this.#o.onError?.(err as Error);
      } finally {
        this.#stream?.destroy();
        this.#stream = null;
        await consumer.close(true).catch(() => {});
      }
      if (this.#stopping) break;
      const onPurpose = this.#reopening;
      this.#reopening = false;
      this.reopened++;
      this.#lastReadAt = Date.now();
      // After an error, or a stream that ended by itself, wait before the next one (never a busy loop).
      if (failed || !onPurpose) await sleep(backoff.next());
    }
  }

  /** Ends the current stream; the loop opens a new one from the next offsets. */
  #reopen(): void {
    if (!this.#stream) return;
    this.#reopening = true;
    this.#stream.destroy();
  }

  /**
   * Once the input has stopped: reads the end offsets, waits until every record below them
   * has been judged (re-opening a stream that stalls), stops the tail and returns the audit.
   * Throws past the deadline (default 10 min), after stopping.
   */
  async finish(timeoutMs = this.#o.timeoutMs ?? 600_000): Promise<InputAudit> {
    const t0 = Date.now();
    const readBefore = this.tally.read;
    try {
      const ends = this.#o.limit ?? (await topicEnds(this.#brokers, this.#o.topic, this.#o.partitions));
      this.tally.limit = ends;
      this.start();
      const done = await poll(
        () => {
          if (this.tally.caughtUp(ends)) return true;
          if (Date.now() - this.#lastReadAt > STALL_MS) {
            this.#lastReadAt = Date.now();
            this.#reopen();
          }
          return false;
        },
        { deadlineMs: Math.max(0, timeoutMs - (Date.now() - t0)), intervalMs: 50 },
      );
      if (!done) {
        const total = ends.reduce((a, b) => a + b, 0);
        throw new Error(`input audit: read ${this.tally.read} of ${total} records before the ${Math.round(timeoutMs / 1000)} s deadline`);
      }
      const res = this.tally.result(this.#o.topic, ends);
      if (!this.#o.limit) res.tail = { leftAtFinish: this.tally.read - readBefore, finishMs: Date.now() - t0, reopened: this.reopened };
      return res;
    } finally {
      await this.stop();
    }
  }

  /** Stops the tail (after an abort, or by finish). */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#reopen();
    await this.#loop?.catch(() => {});
  }
}

/** The audit once, after the input has stopped: the end offsets first, then every record below them. */
export async function auditInput(o: InputAuditOptions): Promise<InputAudit> {
  const ends = await topicEnds(brokersOf(o.bootstrap), o.topic, o.partitions);
  const auditor = new InputAuditor({ ...o, limit: ends });
  if (ends.every((e) => e === 0)) return auditor.tally.result(o.topic, ends);
  auditor.start();
  return auditor.finish();
}
