/**
 * The Flink plug's checkpoint trigger against a local HTTP server standing in for Flink's
 * REST API: the POST it sends (path, method, JSON body), what it does with the job's state
 * and the checkpoint counts first (a job not running, or a checkpoint in progress, asks for
 * nothing), and a refused trigger that throws with the call and its status; what
 * restoredAfterStart answers without a running job.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { checkpointTriggerRequest, flinkEngine, flinkRest, triggerFlinkCheckpoint } from '../../../../engine/flink/plug.ts';

const JOB = 'a5e0edd8e66b53f1b89c2041f91b8fd2';

interface Seen {
  method: string;
  url: string;
  contentType?: string;
  body: string;
}

/** A fake REST API: the job's state, its checkpoint counts, and the trigger's answer are set per test. */
async function fakeFlink(t: { teardown(fn: () => unknown): void }, state: { job: unknown; inProgress: number; triggerStatus?: number }): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}), body });
      const json = (status: number, v: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      if (req.method === 'GET' && req.url === `/jobs/${JOB}`) return json(200, state.job);
      if (req.method === 'GET' && req.url === `/jobs/${JOB}/checkpoints`) return json(200, { counts: { restored: 0, total: 9, in_progress: state.inProgress, completed: 8, failed: 0 } });
      if (req.method === 'POST' && req.url === `/jobs/${JOB}/checkpoints`) {
        const status = state.triggerStatus ?? 202;
        return status === 202 ? json(202, { 'request-id': 'trig-1' }) : json(status, { errors: ['no'] });
      }
      json(404, { errors: ['Not found'] });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const running = { state: 'RUNNING', vertices: [{ status: 'RUNNING', parallelism: 4, tasks: { RUNNING: 4 } }] };
const restarting = { state: 'RESTARTING', vertices: [{ status: 'DEPLOYING', parallelism: 4, tasks: { RUNNING: 1, DEPLOYING: 3 } }] };

t.test('the trigger request: POST /jobs/<id>/checkpoints, the configured checkpoint type', async (t) => {
  const r = checkpointTriggerRequest(JOB);
  t.equal(r.path, `/jobs/${JOB}/checkpoints`);
  t.equal(r.init.method, 'POST');
  t.same(JSON.parse(String(r.init.body)), { checkpointType: 'CONFIGURED' });
  t.same(r.init.headers, { 'Content-Type': 'application/json' });
});

t.test('a running job with no checkpoint in progress: the POST is sent and its request id returned', async (t) => {
  const f = await fakeFlink(t, { job: running, inProgress: 0 });
  const r = await triggerFlinkCheckpoint(<T>(p: string, init?: RequestInit) => flinkRest<T>(f.base, p, init), JOB);
  t.same(r, { requestId: 'trig-1' });
  const post = f.seen.filter((s) => s.method === 'POST');
  t.equal(post.length, 1, 'one trigger');
  t.equal(post[0]!.url, `/jobs/${JOB}/checkpoints`);
  t.equal(post[0]!.contentType, 'application/json');
  t.same(JSON.parse(post[0]!.body), { checkpointType: 'CONFIGURED' });
  t.same(f.seen.map((s) => `${s.method} ${s.url}`), [`GET /jobs/${JOB}`, `GET /jobs/${JOB}/checkpoints`, `POST /jobs/${JOB}/checkpoints`], 'the state, the counts, then the trigger');
});

t.test('a job not running, or a checkpoint in progress, or no answer: nothing is asked', async (t) => {
  const notRunning = await fakeFlink(t, { job: restarting, inProgress: 0 });
  const a = await triggerFlinkCheckpoint(<T>(p: string, init?: RequestInit) => flinkRest<T>(notRunning.base, p, init), JOB);
  t.match(a, { skipped: /RESTARTING/ });
  t.notOk(notRunning.seen.some((s) => s.method === 'POST'), 'no POST while the job restarts');
  const pending = await fakeFlink(t, { job: running, inProgress: 1 });
  const b = await triggerFlinkCheckpoint(<T>(p: string, init?: RequestInit) => flinkRest<T>(pending.base, p, init), JOB);
  t.same(b, { skipped: 'a checkpoint is in progress' });
  t.notOk(pending.seen.some((s) => s.method === 'POST'), 'no POST while a checkpoint is in progress (Flink would queue it)');
  const down = await triggerFlinkCheckpoint(<T>(p: string, init?: RequestInit) => flinkRest<T>('http://127.0.0.1:1', p, init), JOB);
  t.match(down, { skipped: /job state unknown/ }, 'a JobManager that does not answer: a no-op');
});

t.test('a refused trigger throws, naming the call and its status', async (t) => {
  const f = await fakeFlink(t, { job: running, inProgress: 0, triggerStatus: 503 });
  await t.rejects(triggerFlinkCheckpoint(<T>(p: string, init?: RequestInit) => flinkRest<T>(f.base, p, init), JOB), new RegExp(`POST /jobs/${JOB}/checkpoints: HTTP 503`));
});

t.test('restoredAfterStart: a TaskManager reads no durable file; a JobManager with no job running has not restored', async (t) => {
  const plug = flinkEngine();
  t.equal(await plug.restoredAfterStart('worker-1', 'worker'), true);
  t.equal(await plug.restoredAfterStart('coordinator', 'coordinator'), false, 'no job submitted: not restored');
});
