/**
 * The generator's producer: writes events (oracle/generator.ts) into the input topic, each
 * to its own partition explicitly, at a target rate (events/s over all partitions, spread
 * evenly) or as fast as it can, up to an optional total. Idempotent producer, acks=all,
 * one batch in flight at a time, so each partition's log holds seq 0, 1, 2, … at offsets
 * 0, 1, 2, … — the invariant the input audit (oracle/input-audit.ts) checks.
 *
 * Resuming: on open, the next seq of each partition is that partition's end offset, so a
 * restarted producer (a new process, a new instance) continues exactly where the topic
 * stands: no duplicate, no hole. The same resync runs after any send that failed past the
 * client's own retries (a broker restarting, a leader moving): it waits for in-flight
 * requests to settle, lists the end offsets again (until two readings agree), and continues
 * from them — a batch that did land is not sent twice, one that did not is sent again.
 *
 * The residual window, stated plainly: a produce request the broker appends after the
 * resync has read the end offsets (a request stuck in a broker's queue for longer than the
 * settle delay) would be duplicated. The input audit would report it as an input anomaly,
 * apart from the engine's findings.
 */
import { Admin, Producer, ProduceAcks, stringSerializers } from '@platformatic/kafka';
import { Backoff, retry } from '../lib/retry.ts';
import { Generator, serialize, type GeneratorSpec } from './generator.ts';

export interface EventProducerOptions extends GeneratorSpec {
  bootstrap: string | string[];
  topic: string;
  /** Target events/s over all partitions; unset: as fast as acks allow. */
  rate?: number;
  /** Stop after this many events in all (split evenly, the first partitions taking the remainder). */
  total?: number;
  /** Events per send (all partitions together). Default 2,000. */
  batchMax?: number;
  clientId?: string;
  /** Delay before resyncing after a failed send. Default 1 s, doubling to 10 s while it keeps failing. */
  settleMs?: number;
  onError?: (err: Error) => void;
}

function bootstrapList(b: string | string[]): string[] {
  return (Array.isArray(b) ? b : b.split(',')).map((s) => s.trim()).filter(Boolean);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** End offset (next offset to be written) of each partition, from 0 to partitions-1. */
export async function endOffsets(admin: Admin, topic: string, partitions: number): Promise<number[]> {
  const res = await admin.listOffsets({ topics: [{ name: topic, partitions: Array.from({ length: partitions }, (_, i) => ({ partitionIndex: i, timestamp: -1n })) }] });
  const out = new Array<number>(partitions).fill(-1);
  for (const t of res) if (t.name === topic) for (const p of t.partitions) if (p.partitionIndex < partitions) out[p.partitionIndex] = Number(p.offset);
  if (out.some((x) => x < 0)) throw new Error(`listOffsets for ${topic} did not answer for every partition: ${JSON.stringify(out)}`);
  return out;
}

/** Creates the topic with exactly `partitions` partitions if it does not exist; checks the count if it does. */
export async function ensureTopic(bootstrap: string | string[], topic: string, partitions: number, replicas: number): Promise<void> {
  const admin = new Admin({ clientId: 'clink-qual-topic', bootstrapBrokers: bootstrapList(bootstrap) });
  try {
    const topics = await admin.listTopics();
    if (!topics.includes(topic)) {
      await admin.createTopics({ topics: [topic], partitions, replicas, configs: replicas > 1 ? [{ name: 'min.insync.replicas', value: String(Math.min(2, replicas)) }] : [] });
    }
    for (let i = 0; i < 50; i++) {
      const md = await admin.metadata({ topics: [topic], forceUpdate: true });
      const t = md.topics.get(topic);
      if (t && t.partitionsCount > 0 && t.partitions.every((p) => p && p.leader >= 0)) {
        if (t.partitionsCount !== partitions) throw new Error(`topic ${topic} has ${t.partitionsCount} partitions, the campaign wants ${partitions}`);
        return;
      }
      await sleep(200);
    }
    throw new Error(`topic ${topic}: no leader for every partition after 10 s`);
  } finally {
    await admin.close();
  }
}

export class EventProducer {
  readonly gen: Generator;
  readonly #o: EventProducerOptions;
  readonly #next: number[];
  readonly #targets: number[];
  #producer: Producer<string, string, string, string> | undefined;
  #admin: Admin;
  #stopping = false;
  #loop: Promise<void> | undefined;
  errors = 0;
  lastError: string | undefined;
  resyncs = 0;

  private constructor(o: EventProducerOptions, next: number[], admin: Admin) {
    this.#o = o;
    this.gen = new Generator(o);
    this.#next = next;
    this.#admin = admin;
    this.#targets = Array.from({ length: o.partitions }, (_, p) =>
      o.total === undefined ? Number.POSITIVE_INFINITY : Math.floor(o.total / o.partitions) + (p < o.total % o.partitions ? 1 : 0),
    );
  }

  /** Connects and reads where the topic stands (the resume point). The topic must exist. */
  static async open(o: EventProducerOptions): Promise<EventProducer> {
    const admin = new Admin({ clientId: `${o.clientId ?? 'clink-qual-gen'}-admin`, bootstrapBrokers: bootstrapList(o.bootstrap), retries: 5, retryDelay: 500 });
    try {
      const next = await stableEndOffsets(admin, o.topic, o.partitions);
      return new EventProducer(o, next, admin);
    } catch (err) {
      await admin.close().catch(() => {});
      throw err;
    }
  }

  /** Events produced (acknowledged) so far, per partition. Equals the topic's end offsets. */
  produced(): number[] {
    return this.#next.slice();
  }

  get total(): number {
    return this.#next.reduce((a, b) => a + b, 0);
  }

  /** Starts producing in the background; `done` resolves when the total is reached or stop() is called. */
  start(): void {
    this.#loop ??= this.#run();
  }

  get done(): Promise<void> {
    return this.#loop ?? Promise.resolve();
  }

  /** Stops after the batch in flight; closes the clients. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#loop?.catch(() => {});
    await this.#producer?.close().catch(() => {});
    await this.#admin.close().catch(() => {});
  }

  /** Drops the clients without waiting (a crash stand-in for tests). */
  async abandon(): Promise<void> {
    this.#stopping = true;
    await this.#producer?.close(true).catch(() => {});
    await this.#admin.close().catch(() => {});
  }

  #newProducer(): Producer<string, string, string, string> {
    return new Producer({
      clientId: this.#o.clientId ?? 'clink-qual-gen',
      bootstrapBrokers: bootstrapList(this.#o.bootstrap),
      idempotent: true,
      acks: ProduceAcks.ALL,
      retries: 10,
      retryDelay: 500,
      timeout: 10_000,
      serializers: stringSerializers,
    });
  }

  async #run(): Promise<void> {
    const o = this.#o;
    const parts = o.partitions;
    const batchMax = Math.max(parts, o.batchMax ?? 2000);
    const t0 = Date.now();
    const base = this.#next.slice();
    // The settle delay: settleMs, doubling to 10 s while sends keep failing; reset by a send that lands.
    const s0 = o.settleMs ?? 1000;
    const settle = new Backoff((attempt) => (attempt === 1 ? s0 : Math.min(s0 * 2 ** (attempt - 1), 10_000)));
    this.#producer = this.#newProducer();
    while (!this.#stopping) {
      // How far each partition should be now.
      const elapsed = (Date.now() - t0) / 1000;
      const due = this.#targets.map((target, p) => Math.min(target, o.rate === undefined ? Number.POSITIVE_INFINITY : base[p]! + Math.floor((o.rate * elapsed) / parts)));
      if (this.#next.every((n, p) => n >= this.#targets[p]!)) break;
      const per = Math.max(1, Math.floor(batchMax / parts));
      const messages: { topic: string; partition: number; key: string; value: string }[] = [];
      const counts = new Array<number>(parts).fill(0);
      for (let p = 0; p < parts; p++) {
        const n = Math.min(per, due[p]! - this.#next[p]!);
        for (let i = 0; i < n; i++) {
          const seq = this.#next[p]! + i;
          const e = this.gen.event(p, seq);
          messages.push({ topic: o.topic, partition: p, key: e.key, value: serialize(e) });
        }
        counts[p] = Math.max(0, n);
      }
      if (messages.length === 0) {
        await sleep(o.rate ? Math.max(5, Math.min(100, (1000 * parts) / o.rate)) : 5);
        continue;
      }
      try {
        await this.#producer.send({ messages });
        for (let p = 0; p < parts; p++) this.#next[p]! += counts[p]!;
        settle.reset();
      } catch (err) {
        this.errors++;
        this.lastError = (err as Error).message;
        o.onError?.(err as Error);
        await this.#producer.close(true).catch(() => {});
        // Resync from the topic itself: what landed stays, what did not is sent again.
        // Each try waits the next settle delay first; a stop ends it without one.
        await retry(
          async () => {
            if (this.#stopping) return;
            const ends = await stableEndOffsets(this.#admin, o.topic, parts);
            for (let p = 0; p < parts; p++) this.#next[p] = ends[p]!;
            this.resyncs++;
          },
          {
            backoff: settle,
            delayFirst: true,
            onError: (e2) => {
              this.errors++;
              this.lastError = (e2 as Error).message;
              o.onError?.(e2 as Error);
            },
          },
        );
        this.#producer = this.#newProducer();
      }
    }
  }
}

/** End offsets read until two consecutive readings agree (nothing still landing). */
async function stableEndOffsets(admin: Admin, topic: string, partitions: number): Promise<number[]> {
  let prev = await endOffsets(admin, topic, partitions);
  for (let i = 0; i < 20; i++) {
    await sleep(100);
    const cur = await endOffsets(admin, topic, partitions);
    if (cur.every((x, p) => x === prev[p])) return cur;
    prev = cur;
  }
  return prev;
}
