import type { Command } from '../../lib/cli.ts';
import { closeAllRemotes } from '../../rig/ssh.ts';
import { renderStatus, rigStatus } from '../../rig/status.ts';

const command: Command = {
  name: 'rig status',
  summary: "Show each host, its services and the cluster's health",
  description: `For each host: whether it answers over SSH (host key checked), and each service
(rig/process.ts) with its PID, state (running, paused, dead) and health. Then the Kafka
cluster (registered brokers, active controller, KRaft quorum leader and voter lag, read
with the Kafka protocol) and the store (health/live, bucket present).`,
  exitCodes: '0 when everything is healthy, 2 otherwise (or no rig is up), 254 bad arguments, 255 internal error.',
  options: {
    json: { type: 'boolean', description: 'Print the status as JSON' },
  },
  async run({ values }) {
    try {
      const s = await rigStatus();
      const { describeHolder, rigHolder } = await import('../../rig/lock.ts');
      const holder = rigHolder();
      console.log(values.json ? JSON.stringify({ ...s, lock: holder ?? null }, null, 2) : `${renderStatus(s)}\nrig lock: ${holder ? `held by ${describeHolder(holder)}` : 'free'}`);
      return s.healthy ? 0 : 2;
    } finally {
      await closeAllRemotes();
    }
  },
};
export default command;
