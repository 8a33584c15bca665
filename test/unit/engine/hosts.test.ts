/**
 * engine/hosts.ts: the coordinator, the workers and each host's role from the rig's host
 * list, the plug base's guard before deploy(), and collecting a host's files (over a
 * Remote that runs here).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { EngineHosts, collectHostFiles, coordinatorHost, engineHosts, roleOf, workerHosts } from '../../../engine/hosts.ts';
import type { HostSpec, RigState, Role } from '../../../rig/types.ts';
import { localRemote } from '../../helpers/local-remote.ts';

const host = (name: string, ...roles: Role[]): HostSpec => ({ name, address: `10.231.0.${name.length}`, roles, ssh: {} as HostSpec['ssh'], dataDir: `/tmp/${name}` });
const rig = (hosts: HostSpec[]): RigState => ({ hosts }) as unknown as RigState;
const full = rig([host('broker-1', 'broker'), host('worker-1', 'worker'), host('coordinator', 'coordinator'), host('worker-2', 'worker'), host('store', 'store')]);

t.test('hosts and roles from the rig', async (t) => {
  t.equal(coordinatorHost(full).name, 'coordinator');
  t.same(workerHosts(full).map((h) => h.name), ['worker-1', 'worker-2']);
  t.same(engineHosts(full).map((e) => `${e.role}@${e.host.name}`), ['coordinator@coordinator', 'worker@worker-1', 'worker@worker-2'], 'the coordinator first');
  t.equal(roleOf(full, 'worker-2'), 'worker');
  t.equal(roleOf(full, 'coordinator'), 'coordinator');
  t.throws(() => roleOf(full, 'broker-1'), { code: 'BAD_ARGUMENTS', message: 'broker-1 is not an engine host' });
  t.throws(() => coordinatorHost(rig([host('worker-1', 'worker')])), { code: 'PRECONDITION' });
  t.throws(() => workerHosts(rig([host('coordinator', 'coordinator')])), { code: 'PRECONDITION' });
});

t.test('the plug base: nothing before deploy(), the deployed rig after', async (t) => {
  class Plug extends EngineHosts {
    readonly name = 'test-engine';
    deploy(r: RigState): void {
      this.deployedCtx = { rig: r, remote: () => { throw new Error('no remote in a unit test'); }, credentials: { accessKeyId: '', secretAccessKey: '' }, runId: 'r' };
    }
    role(h: string) {
      return this.roleOf(h);
    }
  }
  const p = new Plug();
  t.throws(() => p.coordinatorHost, { code: 'PRECONDITION', message: 'test-engine: deploy() was not called' });
  p.deploy(full);
  t.equal(p.coordinatorHost.name, 'coordinator');
  t.equal(p.workerHosts.length, 2);
  t.equal(p.role('worker-1'), 'worker');
});

t.test('collectHostFiles: the files that exist, a .error for one that fails', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hosts-collect-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const remoteDir = path.join(dir, 'remote');
  mkdirSync(remoteDir);
  writeFileSync(path.join(remoteDir, 'out.log'), 'log line\n');
  mkdirSync(path.join(remoteDir, 'a-dir.json'));
  const r = localRemote(remoteDir);
  // a-dir.json is not a regular file ([ -f ] is false), so it is skipped like a missing one;
  // unreadable.log exists but cannot be copied over a directory of the same name locally.
  writeFileSync(path.join(remoteDir, 'unreadable.log'), 'x');
  const hostDir = path.join(dir, 'logs', 'worker-1');
  mkdirSync(path.join(hostDir, 'unreadable.log'), { recursive: true });
  const written = await collectHostFiles(
    r,
    [
      [path.join(remoteDir, 'out.log'), 'out.log'],
      [path.join(remoteDir, 'missing.jsonl'), 'missing.jsonl'],
      [path.join(remoteDir, 'a-dir.json'), 'a-dir.json'],
      [path.join(remoteDir, 'unreadable.log'), 'unreadable.log'],
    ],
    hostDir,
  );
  t.same(written, [path.join(hostDir, 'out.log')]);
  t.equal(readFileSync(path.join(hostDir, 'out.log'), 'utf8'), 'log line\n');
  t.notOk(existsSync(path.join(hostDir, 'missing.jsonl')));
  t.match(readFileSync(path.join(hostDir, 'unreadable.log.error'), 'utf8'), /EISDIR|directory/i, 'the failure is kept beside');
});

t.test('lastWorkerLogLines: the newest matching line of each worker that has one', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hosts-lines-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const w1 = { ...host('worker-1', 'worker'), dataDir: path.join(dir, 'w1') };
  const w2 = { ...host('worker-2', 'worker'), dataDir: path.join(dir, 'w2') };
  mkdirSync(path.join(w1.dataDir, 'services', 'svc'), { recursive: true });
  writeFileSync(path.join(w1.dataDir, 'services', 'svc', 'out.log'), "open: family=a it's\nother\nopen: family=b it's\n");
  const r = rig([host('coordinator', 'coordinator'), w1, w2]);
  class Plug extends EngineHosts {
    readonly name = 'lines';
    constructor() {
      super();
      this.deployedCtx = { rig: r, remote: (n) => localRemote((n === 'worker-1' ? w1 : w2).dataDir, n), credentials: { accessKeyId: '', secretAccessKey: '' }, runId: 'r' };
    }
    lines() {
      return this.lastWorkerLogLines('svc', "family=");
    }
  }
  t.same(await new Plug().lines(), [{ host: 'worker-1', line: "open: family=b it's" }], 'worker-2 has no log: left out');
});
