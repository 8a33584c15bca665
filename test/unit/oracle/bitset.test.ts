import t from 'tap';
import { GrowableBitset, popcount } from '../../../oracle/bitset.ts';

t.test('testAndSet, has, count, highest, growth', async (t) => {
  const b = new GrowableBitset(64);
  t.equal(b.count, 0);
  t.equal(b.highest, -1);
  t.ok(b.testAndSet(5));
  t.notOk(b.testAndSet(5), 'second time: already set');
  t.ok(b.has(5));
  t.notOk(b.has(6));
  t.notOk(b.has(1_000_000), 'beyond capacity: not set');
  t.ok(b.testAndSet(1_000_000));
  t.ok(b.capacity > 1_000_000);
  t.equal(b.count, 2);
  t.equal(b.highest, 1_000_000);
  t.ok(b.has(5), 'growth keeps what was set');
});

t.test('countRange against a naive count', async (t) => {
  const b = new GrowableBitset(32);
  const set = new Set<number>();
  let x = 12345;
  for (let i = 0; i < 3000; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const v = x % 10_000;
    b.testAndSet(v);
    set.add(v);
  }
  for (const [from, to] of [[0, 10_000], [3, 97], [31, 33], [64, 64], [100, 9_999], [0, 1]]) {
    let n = 0;
    for (const v of set) if (v >= from! && v < to!) n++;
    t.equal(b.countRange(from!, to!), n, `[${from}, ${to})`);
  }
  t.equal(popcount(0xffffffff), 32);
  t.equal(popcount(0), 0);
  t.equal(popcount(0x80000001), 2);
});

t.test('testAndSetRange: what testAndSet says bit by bit, word boundaries and growth included', async (t) => {
  const ranged = new GrowableBitset(32);
  const single = new GrowableBitset(32);
  let x = 777;
  const rnd = (n: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % n;
  };
  let already = 0;
  for (let k = 0; k < 2000; k++) {
    const from = rnd(20_000);
    const to = from + [0, 1, 31, 32, 33, 64, 65, 200][rnd(8)]! - (rnd(3) === 0 ? rnd(2) : 0);
    let refused = 0;
    for (let i = from; i < to; i++) if (!single.testAndSet(i)) refused++;
    const got = ranged.testAndSetRange(from, to);
    if (got !== refused) {
      t.equal(got, refused, `[${from}, ${to})`);
      return;
    }
    already += got;
  }
  t.ok(already > 1000, `${already} bits were already set`);
  t.equal(ranged.count, single.count);
  t.equal(ranged.highest, single.highest);
  t.equal(ranged.countRange(0, ranged.capacity), ranged.count);
  for (let i = 0; i < 20_300; i++) if (ranged.has(i) !== single.has(i)) return t.fail(`bit ${i}`);
  const b = new GrowableBitset(32);
  t.equal(b.testAndSetRange(30, 100_000), 0, 'a range past the capacity grows it');
  t.equal(b.count, 99_970);
  t.equal(b.testAndSetRange(0, 40), 10);
  t.equal(b.testAndSetRange(5, 5), 0, 'an empty range');
  t.equal(b.highest, 99_999);
});

t.test('memory: one bit an event', async (t) => {
  const b = new GrowableBitset();
  for (let i = 0; i < 2_000_000; i++) b.testAndSet(i);
  t.ok(b.bytes <= 2 * (2_000_000 / 8) + 65536, `${b.bytes} bytes for 2M events`);
});
