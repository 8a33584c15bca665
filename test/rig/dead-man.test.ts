/**
 * A controller that dies mid-fault strands no host (issue 30 item 4), on the local rig: a
 * campaign run SIGKILLed the moment its partition of worker-2 landed leaves worker-2 healed
 * by its own dead-man timer within the margin (test/helpers/dead-man-check.ts; the bare
 * inventory hosts run the same check in test/rig/inventory-bare.test.ts). The engine the
 * killed run left behind is cleaned by the next run's preflight, as after any crash.
 */
import t from 'tap';
import { closeAllRemotes, remoteFor } from '../../rig/ssh.ts';
import { readRigState } from '../../rig/state.ts';
import { checkControllerKillHeals, deadManCampaign } from '../helpers/dead-man-check.ts';

t.teardown(() => closeAllRemotes());

async function onWorker2(cmd: string): Promise<string> {
  const h = readRigState().hosts.find((x) => x.name === 'worker-2')!;
  return (await remoteFor(h).exec(cmd, { check: false })).stdout.trim();
}

t.test('a SIGKILLed controller leaves no host partitioned: the host heals itself by its own timer', async (t) => {
  await checkControllerKillHeals(t, deadManCampaign('worker-2'), onWorker2);
});
