/**
 * engine/clink/plug.ts startedUploads, over Remotes that run here: the workers' sink journals
 * read back (a missing journal is a worker that started no upload), and a journal that is
 * there but cannot be read is an error naming the host and the path, never read as empty
 * (which would count zero pending uploads as if measured).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { clinkDir, clinkEngine } from '../../../../engine/clink/plug.ts';
import { encodeRecord } from '../../../../engine/clink/durable-log.ts';
import type { EngineContext } from '../../../../engine/engine.ts';
import type { HostSpec, RigState, Role } from '../../../../rig/types.ts';
import { localRemote } from '../../../helpers/local-remote.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-clink-plug-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

function deployed(dir: string) {
  const host = (name: string, ...roles: Role[]): HostSpec => ({ name, address: '127.0.0.1', roles, ssh: {} as HostSpec['ssh'], dataDir: path.join(dir, name) });
  const rig = { hosts: [host('coordinator', 'coordinator'), host('worker-1', 'worker'), host('worker-2', 'worker')] } as unknown as RigState;
  const engine = clinkEngine();
  const ctx: EngineContext = { rig, remote: (n) => localRemote(rig.hosts.find((h) => h.name === n)!.dataDir, n), credentials: { accessKeyId: '', secretAccessKey: '' }, runId: 'r', log: () => {} };
  // What deploy() records, without deploying anything.
  (engine as unknown as { deployedCtx: EngineContext }).deployedCtx = ctx;
  return { engine, hosts: rig.hosts as [HostSpec, HostSpec, HostSpec] };
}

t.test("each worker's journal read back; a worker with no journal started no upload", async (t) => {
  const { engine, hosts } = deployed(path.join(tmp, 'ok'));
  mkdirSync(clinkDir(hosts[1]), { recursive: true });
  writeFileSync(path.join(clinkDir(hosts[1]), 'journal.jsonl'), encodeRecord({ key: 'runs/r/p0/a.jsonl', uploadId: 'u1', t: '2026-12-05T00:00:00Z' }) + encodeRecord({ key: 'runs/r/p1/b.jsonl', uploadId: 'u2', t: '2026-12-05T00:00:01Z' }));
  t.same(await engine.startedUploads(), [{ key: 'runs/r/p0/a.jsonl', uploadId: 'u1' }, { key: 'runs/r/p1/b.jsonl', uploadId: 'u2' }]);
});

t.test('a journal that cannot be read is an error naming the host and the path', async (t) => {
  const { engine, hosts } = deployed(path.join(tmp, 'bad'));
  const journal = path.join(clinkDir(hosts[2]), 'journal.jsonl');
  mkdirSync(journal, { recursive: true }); // a directory where the journal should be
  await t.rejects(engine.startedUploads(), { code: 'REMOTE_COMMAND_FAILED', message: new RegExp(`^worker-2: cannot read the sink's upload journal ${journal}: .*Is a directory`) });
});
