/**
 * disk-full on an inventory host refuses (FaultNotLanded, before anything is written or
 * asked of the engine) unless the state directory sits on a filesystem of its own; on the
 * local rig it goes on as before, without asking. A fake Remote answers with findmnt outputs
 * captured on this machine; a df answer above MAX_FILL_BYTES stops each fill at its first step.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { diskFull } from '../../../chaos/disk-full.ts';
import { FaultNotLanded, type FaultContext } from '../../../chaos/fault.ts';
import type { ExecResult, Remote } from '../../../rig/remote.ts';
import type { HostSpec, RigState } from '../../../rig/types.ts';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/inventory-doctor');
const fx = (name: string) => readFileSync(path.join(dir, name), 'utf8');

const worker: HostSpec = { name: 'app-a', address: '10.9.0.1', roles: ['worker'], dataDir: '/srv/clink', ssh: { user: 'root', port: 22, privateKeyPath: '/k', knownHostsPath: '/kh' } };

function setup(kind: RigState['kind'], probe: string) {
  const commands: string[] = [];
  let engineAsked = 0;
  const ok = (stdout: string): ExecResult => ({ code: 0, stdout, stderr: '' });
  const remote = {
    host: worker,
    async exec(cmd: string) {
      commands.push(cmd);
      if (cmd.startsWith('d=')) return ok(probe);
      if (cmd.startsWith('df ')) return ok(`${64 * 1024 ** 3} ${32 * 1024 ** 3}\n`); // 64 GiB: more than the fault agrees to fill
      return ok('0\n');
    },
  } as unknown as Remote;
  const ctx = {
    rig: { kind, hosts: [worker] } as unknown as RigState,
    remote: () => remote,
    engine: {
      processes: async () => {
        engineAsked++;
        return [];
      },
    },
    log: () => {},
  } as unknown as FaultContext;
  return { ctx, commands, engineAsked: () => engineAsked };
}

const fault = { id: 'f001', kind: 'disk-full' as const, atS: 10, durationS: 5, target: 'app-a' };

t.test('an inventory host whose state dir is on the root filesystem: refused before anything', async (t) => {
  const s = setup('inventory', fx('mount-probe-srv-on-root.txt'));
  const err = await diskFull.inject(fault, s.ctx).catch((e: unknown) => e);
  t.ok(err instanceof FaultNotLanded);
  t.equal((err as Error).message, "app-a: refused: /srv/clink/state is on the root filesystem (/): filling it would fill the machine's own disk; mount a filesystem of its own at /srv/clink/state or above it");
  t.same((err as FaultNotLanded).evidence.dir, '/srv/clink/state');
  t.equal(s.commands.length, 1, 'only the read-only mount probe ran');
  t.equal(s.engineAsked(), 0);
});

t.test('an inventory host whose state dir has a filesystem of its own: the fill goes ahead', async (t) => {
  const own = fx('mount-probe-local-rig-state.txt');
  const s = setup('inventory', own);
  const err = await diskFull.inject(fault, s.ctx).catch((e: unknown) => e);
  t.ok(s.commands[0]!.startsWith('d='), 'probed first');
  t.ok(s.commands.some((c) => c.startsWith('df ')), 'then measured for the fill');
  t.match((err as Error).message, /on a filesystem of \d+ bytes; the disk-full fault fills at most/, 'the fill itself ran (and stopped at its own size limit)');
});

t.test('the local rig: not asked, as before', async (t) => {
  const s = setup('local', 'never read');
  await diskFull.inject(fault, s.ctx).catch(() => {});
  t.notOk(s.commands.some((c) => c.startsWith('d=')), 'no mount probe on the local rig');
  t.ok(s.commands.some((c) => c.startsWith('df ')));
});
