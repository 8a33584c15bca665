/**
 * The producer pool (bench/producer-pool.ts) with fake members: partitions shared out, a
 * send split as one round-robin producer would split it, numbered before the acks, the
 * members' sends in flight together, ownership checked.
 */
import t from 'tap';
import { ProducerPool, ownedBy, perPartition, type PoolMember } from '../../../bench/producer-pool.ts';

/** A LineProducer stand-in: numbers at once round-robin over its partitions, acks after `ackMs`. */
class FakeMember implements PoolMember {
  seq: number[];
  owned: readonly number[];
  sends: number[] = [];
  closed = false;
  static inFlightAll = 0;
  static maxAll = 0;
  readonly ackMs: number;
  constructor(partitions: number, owned: number[], ackMs = 20) {
    this.seq = new Array(partitions).fill(0);
    this.owned = owned;
    this.ackMs = ackMs;
  }
  async produce(count: number, batch = 1000): Promise<void> {
    if (batch !== count) throw new Error('one batch expected');
    const produced = this.owned.reduce((a, p) => a + this.seq[p]!, 0);
    for (let j = 0; j < count; j++) this.seq[this.owned[(produced + j) % this.owned.length]!]!++;
    this.sends.push(count);
    FakeMember.maxAll = Math.max(FakeMember.maxAll, ++FakeMember.inFlightAll);
    await new Promise((r) => setTimeout(r, this.ackMs));
    FakeMember.inFlightAll--;
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

t.test('ownership and the round-robin share', async (t) => {
  t.same(ownedBy(0, 3, 8), [0, 3, 6]);
  t.same(ownedBy(2, 3, 8), [2, 5]);
  t.same(perPartition(10, 0, 4), [3, 3, 2, 2]);
  t.same(perPartition(10, 3, 4), [3, 2, 2, 3], 'from where the last send stopped');
  t.same(perPartition(2, 0, 4), [1, 1, 0, 0]);
  t.equal(perPartition(12345, 678, 7).reduce((a, b) => a + b, 0), 12345);
});

t.test('a send is numbered before the acks, split over the members, in flight together', async (t) => {
  const members = [0, 1, 2].map((i) => new FakeMember(8, ownedBy(i, 3, 8)));
  const pool = new ProducerPool(8, members);
  FakeMember.maxAll = 0;
  const p = pool.produce(1000);
  t.equal(pool.produced, 1000, 'every event numbered when produce returns');
  t.same(pool.seq, [125, 125, 125, 125, 125, 125, 125, 125]);
  await p;
  // Together, not one after another: all three sends were in flight at once (counted, not
  // timed: a wall-clock bound failed beside the rig at nice 19, 347 ms for 20 ms acks).
  t.equal(FakeMember.maxAll, 3, 'three sends in flight at once: the members acked together');
  t.same(members.map((m) => m.sends), [[375], [375], [250]]);
  await pool.produce(7);
  const seq = pool.seq;
  t.equal(Math.max(...seq) - Math.min(...seq), 1, `balanced within one event (${seq.join(',')})`);
  t.equal(pool.produced, 1007);
  await pool.close();
  t.ok(members.every((m) => m.closed));
  const single = new ProducerPool(4, [new FakeMember(4, [0, 1, 2, 3])]);
  await single.produce(10);
  t.same(single.seq, [3, 3, 2, 2], 'one member: as a single producer');
});

t.test('every partition owned exactly once', async (t) => {
  t.throws(() => new ProducerPool(4, [new FakeMember(4, [0, 1]), new FakeMember(4, [1, 2, 3])]), /partition 1 owned twice/);
  t.throws(() => new ProducerPool(4, [new FakeMember(4, [0, 1, 2])]), /partition 3 owned by no producer/);
});
