/**
 * The sampler against a store that really stops answering (SIGSTOP): a pause shorter than
 * the deadline is an error recorded and retried, then judged normally after the resume; a
 * pause past the deadline is a stuck oracle.
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Sample } from '../../lib/evidence.ts';
import { IncrementalJudge } from '../../oracle/judge.ts';
import { Sampler } from '../../oracle/sampler.ts';
import { storePause } from '../helpers/store-pause.ts';
import { SPEC, ZERO, cleanObjects, dropBucket, makeBucket, put, s3, storeSettings } from './oracle-fixtures.ts';

const client = s3();
const bucket = `oracle-test-s-${process.pid}-${Date.now().toString(36)}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'oracle-sampler-'));
const pauser = await storePause();
let paused = false;
await makeBucket(client, bucket);
t.teardown(async () => {
  if (paused) await pauser.resume();
  await pauser.close();
  await dropBucket(client, bucket).catch(() => {});
  client.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Pauses the store, then starts `during` (so it surely meets the pause), resumes after ms. */
async function withPause<T>(ms: number, during: () => Promise<T>): Promise<T> {
  await pauser.pause();
  paused = true;
  const result = during();
  try {
    await sleep(ms);
  } finally {
    await pauser.resume();
    paused = false;
  }
  return result;
}

t.test('a pause shorter than the deadline: errors recorded, retried, judged normally after the resume', async (t) => {
  const prefix = 'short/';
  const first = cleanObjects(prefix, 100, 50);
  for (const o of first) await put(client, bucket, o.key, o.body);
  const judge = new IncrementalJudge({ ...SPEC, store: storeSettings({ requestTimeoutMs: 1000 }), bucket, prefix, ledgerPath: path.join(dir, 'ledger-short.jsonl') });
  const samplesPath = path.join(dir, 'samples-short.jsonl');
  let n = 100;
  const sampler = new Sampler({ judge, produced: () => [n, n, n], samplesPath, deadlineMs: 60_000, backoffMs: 200, maxBackoffMs: 1000 });
  const s1 = await sampler.sample();
  t.equal(s1.errors, 0);
  t.equal(s1.events, 300);
  // More committed objects, then the store stops while the next sample runs.
  const more = cleanObjects(prefix, 200, 50).filter((o) => !first.some((f) => f.key === o.key));
  for (const o of more) await put(client, bucket, o.key, o.body);
  n = 200;
  const s2 = await withPause(4000, () => sampler.sample());
  t.ok(s2.errors >= 1, `the sample met errors (${s2.errors})`);
  t.match(s2.lastError ?? '', /STORE|Timeout|abort|deadline|socket|ECONN/i, `lastError says what happened: ${s2.lastError}`);
  t.notOk(s2.stuck);
  t.notOk(sampler.stuck);
  t.equal(s2.events, 600, 'everything committed was judged after the resume');
  t.equal(s2.produced, 600);
  t.equal(s2.lag, 0);
  t.strictSame(s2.counters, ZERO);
  const s3b = await sampler.sample();
  t.equal(s3b.errors, 0);
  const written = readFileSync(samplesPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Sample);
  t.equal(written.length, 3, 'one line per sample in samples.jsonl');
  t.equal(written[1]!.errors, s2.errors);
  judge.close();
});

t.test('a pause past the deadline: a stuck oracle', async (t) => {
  const prefix = 'stuck/';
  for (const o of cleanObjects(prefix, 20, 10)) await put(client, bucket, o.key, o.body);
  const judge = new IncrementalJudge({ ...SPEC, store: storeSettings({ requestTimeoutMs: 700 }), bucket, prefix });
  const samplesPath = path.join(dir, 'samples-stuck.jsonl');
  const sampler = new Sampler({ judge, produced: () => [20, 20, 20], samplesPath, intervalMs: 500, deadlineMs: 3000, backoffMs: 200, maxBackoffMs: 500 });
  await pauser.pause();
  paused = true;
  const t0 = Date.now();
  let s: Sample;
  try {
    s = await sampler.sample();
  } finally {
    await pauser.resume();
    paused = false;
  }
  const took = Date.now() - t0;
  t.ok(s.stuck, 'the sample says stuck');
  t.ok(sampler.stuck, 'the sampler says stuck');
  t.match(sampler.stuckError?.message ?? '', /stuck oracle/);
  t.ok(took >= 3000 && took < 10_000, `gave up at the deadline (${took} ms)`);
  t.ok(s.errors >= 2, `retried before giving up (${s.errors} errors)`);
  const written = readFileSync(samplesPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Sample);
  t.equal(written.at(-1)!.stuck, true, 'the stuck sample is in samples.jsonl');
  judge.close();
});

t.test('periodic sampling runs until stopped', async (t) => {
  const prefix = 'periodic/';
  for (const o of cleanObjects(prefix, 30, 10)) await put(client, bucket, o.key, o.body);
  const judge = new IncrementalJudge({ ...SPEC, store: storeSettings(), bucket, prefix });
  const samples: Sample[] = [];
  const sampler = new Sampler({ judge, produced: () => [30, 30, 30], intervalMs: 300, onSample: (s) => samples.push(s) });
  sampler.start();
  await sleep(1000);
  await sampler.stop();
  t.ok(samples.length >= 3, `${samples.length} samples in 1 s at 300 ms`);
  t.ok(samples.every((s) => s.events === 90 && s.lag === 0));
  t.strictSame(samples.at(-1)!.counters, ZERO);
  judge.close();
});
