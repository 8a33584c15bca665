/**
 * Inventory values that reach iptables and the shell: an address that is not an IP literal
 * or a host name (e.g. `-j`) is refused before anything runs, and a good one is quoted.
 * The Remote here records commands instead of running them (the rules themselves are
 * exercised on the rig by test/rig/rig-faults.test.ts).
 */
import t from 'tap';
import { QualError } from '../../../lib/errors.ts';
import { packetLoss, partition } from '../../../rig/faults.ts';
import type { Remote } from '../../../rig/remote.ts';

function recorder() {
  const commands: string[] = [];
  const remote = {
    host: { name: 'worker-1', address: '10.231.0.11', roles: ['worker'], ssh: { port: 22 }, dataDir: '/opt/cq' },
    exec: async (cmd: string) => {
      commands.push(cmd);
      // TCP probes report closed (the partition holds); iptables -L shows one dropped packet.
      if (cmd.includes('-L INPUT')) return { stdout: '    1   60 DROP all -- * * 0.0.0.0/0 0.0.0.0/0 /* clink-qual:f1 */\n===\n', stderr: '', code: 0 };
      return { stdout: 'closed', stderr: '', code: 0 };
    },
  } as unknown as Remote;
  return { commands, remote };
}

t.test('partition: an address that iptables would read as an option is refused, nothing runs', async (t) => {
  for (const bad of ['-j', '-jACCEPT', '10.0.0.1 -j ACCEPT', '$(reboot)', '10.0.0.1;true']) {
    const { commands, remote } = recorder();
    const err = await partition(remote, bad, 'f1').then(() => null, (e: unknown) => e);
    t.ok(err instanceof QualError && err.code === 'BAD_ARGUMENTS', `${bad}: ${String(err)}`);
    t.same(commands, [], `${bad}: no command was run`);
  }
});

t.test('partition: a good address is quoted in the rules', async (t) => {
  const { commands, remote } = recorder();
  const ev = await partition(remote, '10.231.0.21', 'f1');
  t.equal(ev.peer, '10.231.0.21');
  t.match(commands[0], /-I INPUT -s '10\.231\.0\.21' -m comment --comment clink-qual:f1 -j DROP/);
  t.match(commands[0], /-I OUTPUT -d '10\.231\.0\.21' -m comment --comment clink-qual:f1 -j DROP/);
});

t.test('partition: cutAt is when the rules command returned, before the probes that show the cut ran', async (t) => {
  const stamps: number[] = [];
  const { remote } = recorder();
  const exec = remote.exec.bind(remote);
  (remote as { exec: Remote['exec'] }).exec = (async (cmd: string, ...rest: unknown[]) => {
    // Each command takes a while each way, as over SSH: it runs 20 ms after it is sent, and its answer comes 20 ms later.
    await new Promise((res) => setTimeout(res, 20));
    const r = await (exec as (c: string, ...x: unknown[]) => ReturnType<Remote['exec']>)(cmd, ...rest);
    stamps.push(Date.now());
    await new Promise((res) => setTimeout(res, 20));
    return r;
  }) as Remote['exec'];
  const ev = await partition(remote, '10.231.0.21', 'f1');
  const cut = Date.parse(ev.cutAt ?? '');
  t.ok(cut >= stamps[0]! && cut < stamps[1]!, `cutAt ${ev.cutAt} lies after the rules (${new Date(stamps[0]!).toISOString()}) and before the probe returned (${new Date(stamps[1]!).toISOString()})`);
});

t.test('packet loss: the probe address is checked and quoted', async (t) => {
  const { commands, remote } = recorder();
  await t.rejects(packetLoss(remote, 0.5, 'f1', { probeAddress: '1.2.3.4;reboot' }), /not an IP address or a host name/);
  t.notOk(commands.some((c) => c.includes('reboot')), 'the bad address never reached a command');
  const ok = recorder();
  await packetLoss(ok.remote, 0.5, 'f1', { probeAddress: '10.231.0.1', probes: 3 });
  t.ok(ok.commands.some((c) => c.includes(`> '/dev/udp/10.231.0.1/9'`)), ok.commands.join('\n'));
});
