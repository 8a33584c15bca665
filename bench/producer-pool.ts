/**
 * Several line producers splitting one topic's partitions (bench/engine-sustained.ts
 * --producers N): producer i writes the partitions p with p mod N = i, each with its own
 * Kafka connection and idempotent producer id, and a send is split over them and awaited
 * together, so one producer's acknowledgements (acks=all over 3 brokers) no longer pace the
 * whole rate. A send's events are shared out as one producer's round-robin would share them
 * (event j to partition (produced + j) mod P), each member spreading its share round-robin
 * over its own partitions, so the partitions stay balanced.
 */
import type { LineProducer } from '../test/helpers/rig-kit.ts';

/** What the pool needs of a member (LineProducer; a fake in unit tests); `ready`, when it has one, resolves once it can send (a JVM producer's start). */
export type PoolMember = Pick<LineProducer, 'seq' | 'produce' | 'close' | 'owned'> & { ready?(): Promise<void> };

/** The partitions producer `i` of `n` writes. */
export function ownedBy(i: number, n: number, partitions: number): number[] {
  return Array.from({ length: partitions }, (_, p) => p).filter((p) => p % n === i);
}

/** Events each partition gets when `count` events go round-robin from `produced`. */
export function perPartition(count: number, produced: number, partitions: number): number[] {
  const start = produced % partitions;
  return Array.from({ length: partitions }, (_, p) => Math.floor(count / partitions) + ((p - start + partitions) % partitions < count % partitions ? 1 : 0));
}

/** [partition, first seq, count]: one partition's share of a send. */
export type SendRange = [number, number, number];

/**
 * Numbers a send of `count` events for a producer that sends whole ranges elsewhere (a worker
 * thread, a JVM): event j goes to owned[(produced + j) mod owned.length], as LineProducer's
 * round-robin does; `seq` (next seq per partition) is advanced in place, so the caller can log
 * the send times before the acknowledgement. Returns each partition's range, in first-use order.
 */
export function numberSend(seq: number[], owned: readonly number[], count: number): SendRange[] {
  const produced = seq.reduce((a, b) => a + b, 0);
  const per = new Map<number, number>();
  for (let j = 0; j < count; j++) {
    const p = owned[(produced + j) % owned.length]!;
    per.set(p, (per.get(p) ?? 0) + 1);
  }
  const ranges: SendRange[] = [];
  for (const [p, n] of per) {
    ranges.push([p, seq[p]!, n]);
    seq[p]! += n;
  }
  return ranges;
}

export class ProducerPool {
  readonly partitions: number;
  readonly members: readonly PoolMember[];
  readonly #owner: number[];

  constructor(partitions: number, members: readonly PoolMember[]) {
    this.partitions = partitions;
    this.members = members;
    this.#owner = new Array(partitions).fill(-1);
    members.forEach((m, i) => {
      for (const p of m.owned) {
        if (this.#owner[p] !== -1) throw new Error(`ProducerPool: partition ${p} owned twice`);
        this.#owner[p] = i;
      }
    });
    const orphan = this.#owner.indexOf(-1);
    if (orphan >= 0) throw new Error(`ProducerPool: partition ${orphan} owned by no producer`);
  }

  /** Next seq per partition (a fresh array: each partition from its owner). */
  get seq(): number[] {
    return this.#owner.map((i, p) => this.members[i]!.seq[p]!);
  }

  get produced(): number {
    return this.seq.reduce((a, b) => a + b, 0);
  }

  /**
   * Sends `count` events over the members at once; every event is numbered before this
   * returns its promise (as LineProducer.produce numbers a single batch), so the caller can
   * log the send times before the acknowledgements.
   */
  produce(count: number): Promise<void> {
    const each = new Array(this.members.length).fill(0);
    perPartition(count, this.produced, this.partitions).forEach((n, p) => (each[this.#owner[p]!] += n));
    return Promise.all(this.members.map((m, i) => (each[i] ? m.produce(each[i], each[i]) : Promise.resolve()))).then(() => undefined);
  }

  /** Every member can send (those with a start of their own have started). */
  async ready(): Promise<void> {
    await Promise.all(this.members.map((m) => m.ready?.()));
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => m.close()));
  }
}
