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

t.test('memory: one bit an event', async (t) => {
  const b = new GrowableBitset();
  for (let i = 0; i < 2_000_000; i++) b.testAndSet(i);
  t.ok(b.bytes <= 2 * (2_000_000 / 8) + 65536, `${b.bytes} bytes for 2M events`);
});
