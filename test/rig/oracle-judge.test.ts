/**
 * The oracle against the real store: a clean bucket counts nothing; each failure mode,
 * planted for real, is counted exactly, and nothing else is; the from-scratch recount
 * agrees with the incremental judge on every case.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IncrementalJudge } from '../../oracle/judge.ts';
import { recount } from '../../oracle/recount.ts';
import { SPEC, ZERO, cleanObjects, del, dropBucket, gen, lines, makeBucket, put, s3, storeSettings } from './oracle-fixtures.ts';

const client = s3();
const bucket = `oracle-test-${process.pid}-${Date.now().toString(36)}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'oracle-judge-'));
await makeBucket(client, bucket);
t.teardown(async () => {
  await dropBucket(client, bucket).catch(() => {});
  client.destroy();
  rmSync(dir, { recursive: true, force: true });
});

let caseNo = 0;
/** A judge over a fresh prefix, its ledger in the temp dir. */
function judgeFor(prefix: string): { judge: IncrementalJudge; ledgerPath: string } {
  const ledgerPath = path.join(dir, `ledger-${++caseNo}.jsonl`);
  return { judge: new IncrementalJudge({ ...SPEC, store: storeSettings(), bucket, prefix, ledgerPath }), ledgerPath };
}

async function recountOf(prefix: string, produced: number[], ledgerPath?: string) {
  const st = storeSettings();
  return (await recount({ settings: { ...SPEC, bucket, prefix, endpoint: st.endpoint, region: st.region }, credentials: { accessKeyId: st.accessKeyId, secretAccessKey: st.secretAccessKey }, produced, ledgerPath })).recount;
}

const N = 50; // events per partition in the planted cases
const produced = [N, N, N];

/** Puts a clean dataset under prefix (objects of 10), then whatever `plant` adds. */
async function planted(prefix: string, plant: () => Promise<void>): Promise<void> {
  for (const o of cleanObjects(prefix, N, 10)) await put(client, bucket, o.key, o.body);
  await plant();
}

t.test('a clean bucket: every counter zero, every event counted once', async (t) => {
  const prefix = 'clean/';
  const objs = cleanObjects(prefix, 1000, 100);
  for (const o of objs) await put(client, bucket, o.key, o.body);
  const { judge, ledgerPath } = judgeFor(prefix);
  const r = await judge.pass();
  t.equal(r.listed, objs.length);
  t.equal(r.fetched, objs.length);
  t.strictSame(judge.tally.counters([1000, 1000, 1000]), ZERO);
  t.equal(judge.tally.distinct, 3000);
  const again = await judge.pass();
  t.equal(again.fetched, 0, 'a second pass fetches nothing it has seen');
  t.strictSame(judge.tally.counters([1000, 1000, 1000]), ZERO);
  const rc = await recountOf(prefix, [1000, 1000, 1000], ledgerPath);
  t.strictSame(rc.counters, ZERO);
  t.equal(rc.distinctEvents, 3000);
  t.equal(rc.objects, objs.length);
  t.strictSame(rc.perPartition.map((p) => p.highestSeq), [999, 999, 999]);
  judge.close();
});

interface Case {
  name: string;
  plant: (prefix: string) => Promise<void>;
  /** After the first pass (for mutations). */
  after?: (prefix: string) => Promise<void>;
  expect: Partial<typeof ZERO>;
  /** What the settled recount counts, when it differs from the live judge. */
  recountExpect?: Partial<typeof ZERO>;
  produced?: number[];
}

const cases: Case[] = [
  {
    name: 'a duplicate line within one object',
    plant: async (prefix) => put(client, bucket, `${prefix}dup-within.jsonl`, lines(1, N, N + 5) + gen.line(1, N + 2) + '\n'),
    produced: [N, N + 5, N],
    expect: { duplicates: 1 },
  },
  {
    name: 'a duplicate line across objects',
    plant: async (prefix) => put(client, bucket, `${prefix}zz-again.jsonl`, gen.line(2, 7) + '\n'),
    expect: { duplicates: 1 },
  },
  {
    name: 'a gap',
    plant: async (prefix) => {
      await del(client, bucket, `${prefix}p0/00000020.jsonl`);
      await put(client, bucket, `${prefix}p0/00000020.jsonl`, lines(0, 20, 30, [24]));
    },
    expect: { gaps: 1 },
  },
  {
    name: 'an id beyond the generated range (p outside [0, partitions))',
    plant: async (prefix) => put(client, bucket, `${prefix}foreign-p.jsonl`, gen.line(7, 3) + '\n'),
    expect: { foreign: 1 },
  },
  {
    name: 'a line whose payload does not match the seed',
    plant: async (prefix) => {
      const good = gen.line(1, 4);
      const i = good.indexOf('"payload":"') + 12;
      const bad = good.slice(0, i) + (good[i] === 'A' ? 'B' : 'A') + good.slice(i + 1);
      await put(client, bucket, `${prefix}foreign-payload.jsonl`, bad + '\n');
    },
    expect: { foreign: 1 },
  },
  {
    name: 'a zero-byte object',
    plant: async (prefix) => put(client, bucket, `${prefix}empty.jsonl`, ''),
    expect: { corrupted: 1 },
  },
  {
    name: 'an unparsable object',
    plant: async (prefix) => put(client, bucket, `${prefix}garbage.bin`, Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x0a, 0x42])),
    expect: { corrupted: 1 },
  },
  {
    name: 'valid lines followed by trailing garbage',
    plant: async (prefix) => put(client, bucket, `${prefix}trailing.jsonl`, lines(0, N, N + 3) + '{"id":"0-'),
    produced: [N + 3, N, N],
    expect: { corrupted: 1 },
  },
  {
    name: 'an object overwritten after it was judged',
    plant: async () => {},
    after: async (prefix) => put(client, bucket, `${prefix}p1/00000010.jsonl`, lines(1, 10, 20).split('\n').reverse().join('\n').slice(1) + '\n'),
    expect: { mutations: 1 },
  },
  {
    name: 'an object deleted after it was judged',
    plant: async () => {},
    after: async (prefix) => del(client, bucket, `${prefix}p2/00000040.jsonl`),
    expect: { mutations: 1 },
    // The vanished object held partition 2's last 10 events (40-49 of 50 produced): the live
    // judge calls a missing tail lag, the settled recount (given the produced counts) gaps.
    recountExpect: { mutations: 1, gaps: 10 },
  },
  {
    name: 'a sequence beyond what was produced',
    plant: async (prefix) => put(client, bucket, `${prefix}p0/past.jsonl`, gen.line(0, N) + '\n'),
    expect: { pastProduced: 1 },
  },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const prefix = `case-${c.name.replace(/[^a-z0-9]+/gi, '-')}/`;
    await planted(prefix, () => c.plant(prefix));
    const prod = c.produced ?? produced;
    const { judge, ledgerPath } = judgeFor(prefix);
    await judge.pass();
    if (c.after) {
      t.strictSame(judge.tally.counters(prod), ZERO, 'clean before the change');
      await c.after(prefix);
      await judge.pass();
      await judge.pass(); // seen twice: still counted once
    }
    const want = { ...ZERO, ...c.expect };
    t.strictSame(judge.tally.counters(prod), want, 'the judge counts exactly this');
    const rc = await recountOf(prefix, prod, ledgerPath);
    t.strictSame(rc.counters, c.recountExpect ? { ...ZERO, ...c.recountExpect } : want, 'the recount agrees');
    judge.close();
  });
}

t.test('an object overwritten twice counts two mutations in the judge', async (t) => {
  const prefix = 'twice/';
  await put(client, bucket, `${prefix}a.jsonl`, lines(0, 0, 5));
  const { judge } = judgeFor(prefix);
  await judge.pass();
  await put(client, bucket, `${prefix}a.jsonl`, lines(0, 0, 6));
  await judge.pass();
  await put(client, bucket, `${prefix}a.jsonl`, lines(0, 0, 7));
  await judge.pass();
  await judge.pass();
  t.equal(judge.tally.counters([5, 0, 0]).mutations, 2);
  t.equal(judge.tally.distinct, 5, 'a changed object is not fetched again');
  judge.close();
});
