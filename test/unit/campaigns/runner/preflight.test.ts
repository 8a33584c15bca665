/**
 * campaigns/runner/preflight.ts engineStateCheck, over a Remote that runs here (the rig's
 * commands, without the rig): the directories of the Clink plug's durable files (the
 * coordinator's checkpoint log, each worker's sink journal) must be writable on each engine
 * host, and a file there a regular file, or the preflight refuses (exit 2) naming the host
 * and the path, before anything is deployed.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { engineStateCheck } from '../../../../campaigns/runner/preflight.ts';
import { clinkDir, clinkEngine } from '../../../../engine/clink/plug.ts';
import type { HostSpec, RigState, Role } from '../../../../rig/types.ts';
import { localRemote } from '../../../helpers/local-remote.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-preflight-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

function rigIn(dir: string): RigState {
  const host = (name: string, ...roles: Role[]): HostSpec => ({ name, address: '127.0.0.1', roles, ssh: {} as HostSpec['ssh'], dataDir: path.join(dir, name) });
  return { hosts: [host('coordinator', 'coordinator'), host('worker-1', 'worker'), host('worker-2', 'worker'), host('store', 'store')] } as unknown as RigState;
}
const remoteOf = (rig: RigState) => (name: string) => localRemote(rig.hosts.find((h) => h.name === name)!.dataDir, name);
const engine = clinkEngine();

t.test('writable engine state on every engine host: the check passes and leaves no probe behind', async (t) => {
  const rig = rigIn(path.join(tmp, 'ok'));
  const c = await engineStateCheck(rig, remoteOf(rig), engine);
  t.ok(c.passed, c.evidence);
  t.match(c.evidence, /3 durable file place\(s\) on 3 host\(s\) writable/);
  for (const h of rig.hosts.filter((x) => x.name !== 'store')) t.same(readdirSync(clinkDir(h)), [], `${h.name}: the probe is removed`);
});

t.test("a worker whose state directory cannot be made, a coordinator whose log is a directory: refused, naming host and path", async (t) => {
  const rig = rigIn(path.join(tmp, 'bad'));
  const [coordinator, worker1, worker2] = rig.hosts as [HostSpec, HostSpec, HostSpec];
  // worker-2's <dataDir>/state is a regular file: its clink directory cannot be created.
  mkdirSync(worker2.dataDir, { recursive: true });
  writeFileSync(path.join(worker2.dataDir, 'state'), 'not a directory');
  // The coordinator's checkpoint log is a directory: the deploy's clean-up and every read would fail.
  mkdirSync(path.join(clinkDir(coordinator), 'checkpoints.log'), { recursive: true });
  const c = await engineStateCheck(rig, remoteOf(rig), engine);
  t.notOk(c.passed);
  t.match(c.evidence, `worker-2: ${clinkDir(worker2)}/journal.jsonl (the sink's upload journal`);
  t.match(c.evidence, /Not a directory|File exists/);
  t.match(c.evidence, `coordinator: ${clinkDir(coordinator)}/checkpoints.log (the completed-checkpoint log`);
  t.match(c.evidence, 'is not a regular file');
  t.notMatch(c.evidence, 'worker-1', `${worker1.name} is fine`);
});

t.test('an engine that declares no durable files has nothing to check', async (t) => {
  const rig = rigIn(path.join(tmp, 'none'));
  const c = await engineStateCheck(rig, remoteOf(rig), {});
  t.ok(c.passed);
});
