/**
 * pauseService (rig/faults.ts) against a Remote that answers as a process would: a process
 * whose state shows T only some reads after its SIGSTOP is paused (every thread stops, not at
 * once); one never seen stopped does not land, and is sent SIGCONT so that a stop arriving
 * later cannot leave it frozen with nothing to heal it.
 */
import t from 'tap';
import { QualError } from '../../../lib/errors.ts';
import { pauseService } from '../../../rig/faults.ts';
import type { Remote } from '../../../rig/remote.ts';

/** A remote whose service has pid 4242 and whose /proc state reads `states` in turn (the last one from then on). */
function processRemote(states: string[]) {
  const commands: string[] = [];
  let reads = 0;
  const remote = {
    host: { name: 'worker-1', address: '10.231.0.11', roles: ['worker'], ssh: { port: 22 }, dataDir: '/opt/cq' },
    exec: async (cmd: string) => {
      commands.push(cmd);
      if (cmd.includes('/pid')) return { stdout: '4242\n', stderr: '', code: 0 };
      if (cmd.includes('/proc/4242/stat')) return { stdout: `${states[Math.min(reads++, states.length - 1)]}\n`, stderr: '', code: 0 };
      return { stdout: '', stderr: '', code: 0 };
    },
  } as unknown as Remote;
  return { commands, remote, reads: () => reads };
}

t.test('a process that shows T a few reads after SIGSTOP is paused', async (t) => {
  const p = processRemote(['R', 'R', 'R', 'T']);
  const ev = await pauseService(p.remote, 'clink-worker', 2000, 2000);
  t.same(ev, { pid: 4242, state: 'T' });
  t.equal(p.reads(), 4, 'read until it showed T');
  t.ok(p.commands.includes('kill -STOP 4242'));
  t.notOk(p.commands.includes('kill -CONT 4242'), 'no SIGCONT for a pause that landed');
});

t.test('a process never seen stopped does not land, and gets SIGCONT', async (t) => {
  const p = processRemote(['R']);
  const err = await pauseService(p.remote, 'clink-worker', 2000, 300).then(() => null, (e: unknown) => e);
  t.ok(err instanceof QualError && err.code === 'FAULT_NOT_LANDED', String(err));
  t.match(String((err as Error).message), /in state R 300 ms after SIGSTOP, not T \(sent SIGCONT\)/);
  t.ok(p.reads() > 2, `looked again while it had time (${p.reads()} reads)`);
  t.equal(p.commands.at(-1), 'kill -CONT 4242', 'the stop is undone');
});
