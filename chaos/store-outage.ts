/**
 * Store outage: SIGSTOP the object store's process (it keeps its sockets, so requests hang
 * rather than being refused, as with a stalled server); heal with SIGCONT. Landing evidence:
 * the process is stopped (state T) and an S3 request from the operations host times out;
 * healing evidence: it answers again.
 */
import { pauseService, resumeService } from '../rig/faults.ts';
import { STORE_SERVICE } from '../rig/store.ts';
import { FaultNotLanded, type FaultPackage } from './fault.ts';
import { probeStore } from './probes.ts';

export const storeOutage: FaultPackage = {
  kind: 'store-outage',
  label: 'Object store unavailable, then restored',
  async inject(_fault, ctx) {
    const host = ctx.rig.store.host;
    const remote = ctx.remote(host);
    const heal = async () => ({ host, ...(await resumeService(remote, STORE_SERVICE)) });
    let paused;
    try {
      paused = await pauseService(remote, STORE_SERVICE);
    } catch (err) {
      await heal().catch(() => {});
      throw new FaultNotLanded((err as Error).message);
    }
    // The S3 API itself, as the engine uses it, must fail too.
    const probe = await probeStore(ctx.rig, ctx.credentials, 1500);
    if (probe.ok) {
      await heal();
      throw new FaultNotLanded('the store still answered S3 requests after SIGSTOP', { probe });
    }
    ctx.log(`store paused (pid ${paused.pid}); S3 request failed after ${probe.ms} ms`);
    return { evidence: { host, ...paused, signal: 'SIGSTOP', s3RequestFailedMs: probe.ms, s3Error: probe.error }, heal };
  },
};
