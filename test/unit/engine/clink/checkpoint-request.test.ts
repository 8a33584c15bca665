/**
 * A checkpoint asked for now (engine/clink/checkpoint-request.ts): the request file is taken
 * at most once, and the coordinator's look serves a request only when a barrier can start,
 * without moving the periodic grid (the same slots as with no requests at all, a slot that
 * comes while the requested checkpoint is pending handled like any slot that comes while one
 * is pending).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { CheckpointCadence } from '../../../../engine/clink/cadence.ts';
import { CHECKPOINT_REQUEST_FILE, barrierDue, checkpointRequestPath, takeCheckpointRequest } from '../../../../engine/clink/checkpoint-request.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-cprequest-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

t.test('a request is taken once: there, then gone', async (t) => {
  const dir = path.join(tmp, 'take');
  mkdirSync(dir);
  t.equal(checkpointRequestPath(dir), path.join(dir, CHECKPOINT_REQUEST_FILE));
  t.equal(takeCheckpointRequest(dir), false, 'no request');
  writeFileSync(checkpointRequestPath(dir), '{"at":"2026-12-04T00:00:00.000Z"}\n');
  t.equal(takeCheckpointRequest(dir), true, 'the request is taken');
  t.notOk(existsSync(checkpointRequestPath(dir)), 'and removed');
  t.equal(takeCheckpointRequest(dir), false, 'a second look finds none');
  t.equal(takeCheckpointRequest(path.join(tmp, 'no-such-dir')), false, 'no directory: no request');
});

t.test('anything but "no request" is an error, not a silent no', async (t) => {
  const dir = path.join(tmp, 'bad');
  mkdirSync(path.join(dir, CHECKPOINT_REQUEST_FILE), { recursive: true });
  t.throws(() => takeCheckpointRequest(dir), /EISDIR|EPERM/);
});

/**
 * The coordinator's looks every 250 ms from 0 to `to` over an interval of 6 s: the job runs
 * from `runningFrom`, a checkpoint stays pending `pendingMs` after its barrier, a request is
 * made at each time in `requests` (taken at the next look, as the coordinator does).
 */
function walk(opts: { to: number; requests?: number[]; runningFrom?: number; pendingMs?: number }): { at: number; why: 'periodic' | 'requested' }[] {
  const c = new CheckpointCadence(6000);
  const runningFrom = opts.runningFrom ?? 0;
  const requests = [...(opts.requests ?? [])].sort((a, b) => a - b);
  const barriers: { at: number; why: 'periodic' | 'requested' }[] = [];
  let pendingUntil = -1;
  let wasRunning = false;
  for (let now = 0; now <= opts.to; now += 250) {
    const running = now >= runningFrom;
    if (running && !wasRunning) c.running(now);
    wasRunning = running;
    let requested = false;
    while (requests.length && requests[0]! <= now) {
      requests.shift();
      requested = true;
    }
    const why = barrierDue({ running, pending: now < pendingUntil, requested }, c, now);
    if (why) {
      barriers.push({ at: now, why });
      pendingUntil = now + (opts.pendingMs ?? 1000);
    }
  }
  return barriers;
}

t.test('a request is served at the next look; the periodic grid stays where it was', async (t) => {
  const none = walk({ to: 30_000 });
  t.same(none, [6000, 12000, 18000, 24000, 30000].map((at) => ({ at, why: 'periodic' })), 'without requests: the grid');
  const some = walk({ to: 30_000, requests: [2600, 14_100] });
  t.same(
    some,
    [
      { at: 2750, why: 'requested' },
      { at: 6000, why: 'periodic' },
      { at: 12000, why: 'periodic' },
      { at: 14250, why: 'requested' },
      { at: 18000, why: 'periodic' },
      { at: 24000, why: 'periodic' },
      { at: 30000, why: 'periodic' },
    ],
    'each request served at the next look; every periodic slot where it was',
  );
});

t.test('a slot that comes while the requested checkpoint is pending: at the first look after it, then the grid', async (t) => {
  const b = walk({ to: 18_000, requests: [5400], pendingMs: 1000 });
  t.same(b, [
    { at: 5500, why: 'requested' },
    { at: 6500, why: 'periodic' },
    { at: 12000, why: 'periodic' },
    { at: 18000, why: 'periodic' },
  ]);
});

t.test('a request is dropped, not remembered, while the job is not running or a checkpoint is pending', async (t) => {
  const notRunning = walk({ to: 12_000, requests: [1000], runningFrom: 2000 });
  t.same(notRunning, [{ at: 8000, why: 'periodic' }], 'no barrier for a request made before the job ran');
  const whilePending = walk({ to: 12_000, requests: [6200], pendingMs: 2000 });
  t.same(whilePending, [
    { at: 6000, why: 'periodic' },
    { at: 12000, why: 'periodic' },
  ], 'a request taken while a checkpoint is pending starts nothing later');
  const c = new CheckpointCadence(6000);
  c.running(0);
  t.equal(barrierDue({ running: true, pending: false, requested: true }, c, 6000), 'periodic', 'a request on the look a slot is due: one barrier, the periodic one');
  t.equal(barrierDue({ running: true, pending: false, requested: false }, c, 6250), null, 'and no second one');
  t.equal(c.nextAt, 12000, 'the grid unchanged');
});
