/**
 * Broker restart: stop a Kafka broker (its port is shown closed), start it again and wait
 * until it has registered with the cluster. It heals itself; `heal` has nothing to undo.
 */
import { restartBroker } from '../rig/faults.ts';
import { FaultNotLanded, targetOrFirst, type FaultPackage } from './fault.ts';

export const brokerRestart: FaultPackage = {
  kind: 'broker-restart',
  spec: {
    label: 'Kafka broker stopped and started again',
    summary: 'stop a broker and start it again.',
    colour: '#bcbd22',
    targets: { roles: ['broker'], what: 'brokers', defaultRoles: ['broker'] },
    fields: { required: [], optional: ['durationS'] },
    evidence: "the broker's PID gone; its new PID and the broker answering again at the heal",
  },
  async inject(fault, ctx) {
    const host = targetOrFirst(fault, ctx.rig, 'broker');
    try {
      const ev = await restartBroker(ctx.remote(host), ctx.rig);
      ctx.log(`restarted broker ${host} (down ${ev.downMs} ms)`);
      return { evidence: { host, ...ev }, heal: async () => ({ host, note: 'the broker was started again as part of the fault' }) };
    } catch (err) {
      throw new FaultNotLanded((err as Error).message);
    }
  },
};
