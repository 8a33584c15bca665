/**
 * rig/parts-ready.ts: a rig up beside an install waits for each part on its own; a part done
 * before anyone asks is ready at once; the install's end fails what it did not finish, with
 * its error when it failed; a waiter that went away leaves no unhandled rejection.
 */
import t from 'tap';
import type { Component } from '../../../rig/install.ts';
import { PartsReady } from '../../../rig/parts-ready.ts';

const part = (name: string): Component => ({ name, version: '1', path: `/cache/${name}`, sha256: 'x'.repeat(64) });

t.test('done before or after the wait: the same component', async (t) => {
  const r = new PartsReady();
  r.done('kafka', part('kafka'));
  const late = r.component('minio');
  r.done('minio', part('minio'));
  t.same(await r.component('kafka'), part('kafka'), 'done first, waited after');
  t.same(await late, part('minio'), 'waited first, done after');
  r.done('minio', part('other'));
  t.same(await r.component('minio'), part('minio'), 'a second done changes nothing');
});

t.test('a part with no component', async (t) => {
  const r = new PartsReady();
  r.done('apt packages');
  t.equal(await r.wait('apt packages'), undefined);
  await t.rejects(r.component('apt packages'), /yields no component/);
});

t.test("the install's end: what it did not finish fails, with its error when it failed", async (t) => {
  const ok = new PartsReady();
  const pending = ok.wait('seaweedfs');
  ok.done('kafka', part('kafka'));
  ok.end();
  await t.rejects(pending, /rig install ended without seaweedfs/);
  await t.rejects(ok.wait('flink'), /rig install ended without flink/, 'asked after the end');
  t.same(await ok.component('kafka'), part('kafka'), 'done parts stay ready');

  const failed = new PartsReady();
  const minio = failed.wait('minio');
  failed.end(new Error('go: no route'));
  await t.rejects(minio, /go: no route/);
  await t.rejects(failed.wait('node'), /go: no route/);
});

t.test('a waiter that went away: no unhandled rejection', async (t) => {
  const seen: unknown[] = [];
  const on = (e: unknown) => seen.push(e);
  process.on('unhandledRejection', on);
  t.teardown(() => process.off('unhandledRejection', on));
  const r = new PartsReady();
  void r.wait('minio');
  r.end(new Error('failed'));
  await new Promise((res) => setTimeout(res, 50));
  t.same(seen, []);
});
