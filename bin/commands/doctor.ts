import type { Command } from '../../lib/cli.ts';
import { renderDoctor, runDoctor } from '../../rig/doctor.ts';

const command: Command = {
  name: 'doctor',
  summary: 'Check (read-only) that this machine can run the local rig; one line a check with its fix',
  description: `Changes nothing on the machine. Checks: running as root; network namespaces usable
('ip netns list'); iptables; Java >= 17; go and mvn; free disk for the cache and runs/;
free memory for the rig (about 3 GiB with Flink); no host address or route overlapping the
rig's subnet 10.231.0.0/24; the cache manifest's files against their sha256s (reads every
cached file); the rig's state (up, down, or leftovers of one). 'smoke' runs it first, and
treats what smoke sets up itself (the cache) as a warning.`,
  exitCodes: '0 every check passed (warnings allowed), 1 a check failed, 254 bad arguments.',
  options: {
    json: { type: 'boolean', description: 'Print the checks as JSON: {ok, checks: [{name, status, detail, fix?}]}' },
    'no-hashes': { type: 'boolean', description: "Skip hashing the cached files (the manifest is still read)" },
  },
  examples: ['clink-qual doctor', 'clink-qual doctor --json'],
  async run({ values }) {
    const r = await runDoctor({ hashes: !values['no-hashes'] });
    const { describeHolder, rigHolder } = await import('../../rig/lock.ts');
    const holder = rigHolder();
    console.log(values.json ? JSON.stringify({ ...r, rigLock: holder ?? null }, null, 2) : `${renderDoctor(r)}\nrig lock: ${holder ? `held by ${describeHolder(holder)} (commands that use the rig wait for it)` : 'free'}`);
    return r.ok ? 0 : 1;
  },
};
export default command;
