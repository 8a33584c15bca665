/**
 * The sampler's retries (oracle/sampler.ts over lib/retry.ts) without a rig: a real
 * IncrementalJudge and S3 client against a loopback HTTP server that answers the bucket
 * listing with 500s (retryable), a 403 (not retryable) or an empty listing. Retryable errors
 * are counted and retried until the pass completes; a non-retryable one is a stuck sample at
 * once; past the deadline the sample is stuck with the attempts and the last error; a stop
 * (abort) ends the retries without a stuck sample.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { IncrementalJudge } from '../../../oracle/judge.ts';
import { Sampler } from '../../../oracle/sampler.ts';

const EMPTY_LISTING =
  '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>p/</Prefix><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>';
const ERROR = (code: string) => `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code} on purpose</Message></Error>`;

/** What the server answers to the next request. */
let answer: () => { status: number; body: string } = () => ({ status: 200, body: EMPTY_LISTING });
let requests = 0;
const server = http.createServer((req, res) => {
  requests++;
  req.resume();
  const a = answer();
  res.writeHead(a.status, { 'content-type': 'application/xml' });
  res.end(a.body);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'sampler-retry-'));
t.teardown(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function sampler(extra: { deadlineMs: number; backoffMs: number; maxBackoffMs: number }): Sampler {
  const judge = new IncrementalJudge({
    seed: 'sampler-retry',
    partitions: 1,
    keys: 10,
    store: { endpoint, region: 'us-east-1', accessKeyId: 'k', secretAccessKey: 's', requestTimeoutMs: 2000 },
    bucket: 'b',
    prefix: 'p/',
    ledgerPath: path.join(dir, `ledger-${++n}.jsonl`),
  });
  return new Sampler({ judge, produced: () => [0], ...extra });
}

t.test('500s, then the listing: each failure counted, retried, the sample completes', async (t) => {
  let fails = 3;
  answer = () => (fails-- > 0 ? { status: 500, body: ERROR('InternalError') } : { status: 200, body: EMPTY_LISTING });
  const s = await sampler({ deadlineMs: 30_000, backoffMs: 20, maxBackoffMs: 40 }).sample();
  t.equal(s.errors, 3, 'three failed passes');
  t.match(s.lastError, /InternalError|500/);
  t.notOk(s.stuck, 'not stuck');
  t.equal(s.events, 0);
});

t.test('a 403 is not retried: stuck at once with that error', async (t) => {
  answer = () => ({ status: 403, body: ERROR('AccessDenied') });
  const before = requests;
  const sp = sampler({ deadlineMs: 30_000, backoffMs: 20, maxBackoffMs: 40 });
  const s = await sp.sample();
  t.equal(s.errors, 1);
  t.equal(s.stuck, true);
  t.equal(sp.stuckError?.code, 'PRECONDITION');
  t.equal(requests - before, 1, 'one request');
});

t.test('500s past the deadline: stuck, with the attempts and the last error', async (t) => {
  answer = () => ({ status: 500, body: ERROR('InternalError') });
  const sp = sampler({ deadlineMs: 1000, backoffMs: 100, maxBackoffMs: 200 });
  const t0 = Date.now();
  const s = await sp.sample();
  const took = Date.now() - t0;
  t.equal(s.stuck, true);
  t.ok(s.errors >= 3, `${s.errors} attempts`);
  t.equal(sp.stuckError?.code, 'STORE_UNAVAILABLE');
  t.match(sp.stuckError?.message, new RegExp(`^stuck oracle: a sample could not complete within 1 s \\(${s.errors} attempts; last error: `));
  t.ok(took >= 1000 && took < 5000, `ended at the deadline (${took} ms)`);
});

t.test('a stop (abort) during the retries: not stuck, the errors kept', async (t) => {
  answer = () => ({ status: 500, body: ERROR('InternalError') });
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 300);
  const t0 = Date.now();
  const sp = sampler({ deadlineMs: 60_000, backoffMs: 100, maxBackoffMs: 100 });
  const s = await sp.sample(ac.signal);
  t.ok(Date.now() - t0 < 5000, `ended soon after the abort (${Date.now() - t0} ms)`);
  t.notOk(s.stuck);
  t.notOk(sp.stuck);
  t.ok(s.errors >= 1, `${s.errors} errors kept`);
});
