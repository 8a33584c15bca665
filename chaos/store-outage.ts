/**
 * Store outage: SIGSTOP the object store's process (it keeps its sockets, so requests hang
 * rather than being refused, as with a stalled server); heal with SIGCONT. Landing evidence:
 * an S3 request from the operations host times out; healing evidence: it answers again.
 */
import { signalService } from '../rig/process.ts';
import { FaultNotLanded, type FaultPackage } from './fault.ts';
import { probeStore } from './probes.ts';

export const STORE_SERVICE = 'minio';

export const storeOutage: FaultPackage = {
  kind: 'store-outage',
  label: 'Object store unavailable, then restored',
  async inject(_fault, ctx) {
    const host = ctx.rig.store.host;
    const remote = ctx.remote(host);
    const pid = await signalService(remote, STORE_SERVICE, 'STOP');
    if (pid === null) throw new FaultNotLanded(`the store service is not running on ${host}`);
    const heal = async () => {
      await remote.exec(`kill -CONT ${pid}`, { check: false });
      for (let i = 0; i < 20; i++) {
        const p = await probeStore(ctx.rig, ctx.credentials, 3000);
        if (p.ok) return { host, pid, signal: 'SIGCONT', s3AnsweredMs: p.ms };
      }
      throw new Error(`the store on ${host} did not answer after SIGCONT`);
    };
    const probe = await probeStore(ctx.rig, ctx.credentials, 1500);
    if (probe.ok) {
      await heal();
      throw new FaultNotLanded('the store still answered after SIGSTOP', { pid, probe });
    }
    ctx.log(`store paused (pid ${pid}); S3 request failed after ${probe.ms} ms (${probe.error})`);
    return { evidence: { host, pid, signal: 'SIGSTOP', s3RequestFailedMs: probe.ms, s3Error: probe.error }, heal };
  },
};
