/**
 * Helpers for Clink's integration tests (test/rig/engine-*.test.ts) and its benchmark
 * (bench/engine.ts), against the live rig: the engine context over SSH, a fresh input
 * topic, a simple producer of JSON lines {"p","seq"}, and a bucket count of committed
 * lines by (p, seq). Test and benchmark code only, kept out of the engine.
 */
import { Admin, Producer, stringSerializers } from '@platformatic/kafka';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { EngineContext } from '../../engine/engine.ts';
import type { Remote } from '../../rig/remote.ts';
import type { RigState, StoreCredentials } from '../../rig/types.ts';
import { readRigState, readStoreCredentials } from '../../rig/state.ts';
import { remoteFor, closeAllRemotes } from '../../rig/ssh.ts';
import { poll } from '../../lib/retry.ts';

export interface RigKit {
  state: RigState;
  credentials: StoreCredentials;
  remote(host: string): Remote;
  ctx(runId: string, log?: (l: string) => void): EngineContext;
  s3: S3Client;
  bootstrap: string[];
  close(): Promise<void>;
}

export function rigKit(): RigKit {
  const state = readRigState();
  const credentials = readStoreCredentials(state);
  const remote = (name: string): Remote => {
    const h = state.hosts.find((x) => x.name === name);
    if (!h) throw new Error(`no host ${name} in the rig`);
    return remoteFor(h);
  };
  const s3 = new S3Client({ endpoint: state.store.endpoint, region: state.store.region, forcePathStyle: true, credentials, maxAttempts: 2 });
  return {
    state,
    credentials,
    remote,
    ctx: (runId, log) => ({ rig: state, remote, credentials, runId, log }),
    s3,
    bootstrap: state.kafka.bootstrap.split(','),
    close: async () => {
      s3.destroy();
      await closeAllRemotes();
    },
  };
}

export async function createTopic(bootstrap: string[], topic: string, partitions: number, replicas: number): Promise<void> {
  const admin = new Admin({ clientId: 'clink-testkit-admin', bootstrapBrokers: bootstrap });
  try {
    await admin.createTopics({ topics: [topic], partitions, replicas });
  } finally {
    await admin.close();
  }
}

/** Deletes a topic (the benchmarks' cleanup of their own fresh topics). */
export async function deleteTopic(bootstrap: string[], topic: string): Promise<void> {
  const admin = new Admin({ clientId: 'clink-testkit-admin', bootstrapBrokers: bootstrap });
  try {
    await admin.deleteTopics({ topics: [topic] });
  } finally {
    await admin.close();
  }
}

/** Produces JSON lines {"p","seq","pad"} round-robin over partitions; seq counts per partition. */
export class LineProducer {
  readonly topic: string;
  readonly partitions: number;
  readonly seq: number[];
  /** The partitions this producer writes (all by default; a share of them when several producers split a topic). */
  readonly owned: readonly number[];
  #producer: Producer<string, string, string, string>;
  pad: string;

  constructor(bootstrap: string[], topic: string, partitions: number, padBytes = 60, owned?: readonly number[]) {
    this.topic = topic;
    this.partitions = partitions;
    this.seq = new Array(partitions).fill(0);
    this.owned = owned ?? Array.from({ length: partitions }, (_, p) => p);
    if (!this.owned.length || this.owned.some((p) => !Number.isInteger(p) || p < 0 || p >= partitions)) throw new Error(`LineProducer: owned partitions ${JSON.stringify(owned)} not within 0..${partitions - 1}`);
    this.pad = 'x'.repeat(padBytes);
    this.#producer = new Producer({ clientId: 'clink-testkit-producer', bootstrapBrokers: bootstrap, serializers: stringSerializers, idempotent: true, acks: -1, retries: 20, retryDelay: 500 });
  }

  get produced(): number {
    return this.seq.reduce((a, b) => a + b, 0);
  }

  /** Sends `count` events (in batches), round-robin over its partitions. */
  async produce(count: number, batch = 1000): Promise<void> {
    for (let i = 0; i < count; i += batch) {
      const n = Math.min(batch, count - i);
      const messages = [];
      for (let j = 0; j < n; j++) {
        const p = this.owned[(this.produced + j) % this.owned.length]!;
        messages.push({ topic: this.topic, partition: p, value: '' });
      }
      for (const m of messages) m.value = JSON.stringify({ p: m.partition, seq: this.seq[m.partition]!++, pad: this.pad });
      await this.#producer.send({ messages });
    }
  }

  async close(): Promise<void> {
    await this.#producer.close();
  }
}

export interface BucketCount {
  objects: number;
  lines: number;
  distinct: number;
  duplicates: number;
  /** (p, seq) below the produced count per partition that are missing. */
  missing: number;
  foreign: number;
  zeroByte: number;
}

/** Reads every object under the prefix and counts committed lines by (p, seq). */
export async function countBucket(s3: S3Client, bucket: string, prefix: string, produced: number[]): Promise<BucketCount> {
  const seen = produced.map((n) => new Uint8Array(n));
  const c: BucketCount = { objects: 0, lines: 0, distinct: 0, duplicates: 0, missing: 0, foreign: 0, zeroByte: 0 };
  let token: string | undefined;
  do {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of r.Contents ?? []) {
      c.objects++;
      if (!o.Size) {
        c.zeroByte++;
        continue;
      }
      const body = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }))).Body!.transformToString();
      for (const line of body.split('\n')) {
        if (!line) continue;
        c.lines++;
        let e: { p?: number; seq?: number };
        try {
          e = JSON.parse(line) as { p?: number; seq?: number };
        } catch {
          c.foreign++;
          continue;
        }
        const arr = typeof e.p === 'number' ? seen[e.p] : undefined;
        if (!arr || typeof e.seq !== 'number' || e.seq < 0 || e.seq >= arr.length) {
          c.foreign++;
          continue;
        }
        if (arr[e.seq]! > 0) c.duplicates++;
        else c.distinct++;
        arr[e.seq] = Math.min(255, arr[e.seq]! + 1);
      }
    }
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  for (const arr of seen) for (const v of arr) if (v === 0) c.missing++;
  return c;
}

/**
 * Polls the bucket (every 2 s) until every produced event is committed; past the deadline,
 * one more count is returned as it is (or its error thrown).
 */
export async function waitAllCommitted(s3: S3Client, bucket: string, prefix: string, produced: number[], timeoutMs: number, log?: (l: string) => void): Promise<BucketCount> {
  const count = async (): Promise<BucketCount> => {
    try {
      const c = await countBucket(s3, bucket, prefix, produced);
      log?.(`bucket: ${c.distinct}/${produced.reduce((a, b) => a + b, 0)} distinct, ${c.duplicates} duplicates, ${c.objects} objects`);
      return c;
    } catch (err) {
      log?.(`bucket count failed: ${(err as Error).message}`);
      throw err;
    }
  };
  const all = await poll(async () => {
    const c = await count();
    return c.missing === 0 ? c : null;
  }, { deadlineMs: timeoutMs, intervalMs: 2000, ignoreErrors: true });
  return all ?? (await count());
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
