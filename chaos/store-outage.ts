/**
 * Store outage: SIGSTOP the object store's process (MinIO, or SeaweedFS's `weed server`, whose
 * master, volume server, filer and S3 gateway are one process) (it keeps its sockets, so requests hang
 * rather than being refused, as with a stalled server); heal with SIGCONT. Landing evidence:
 * the process is stopped (state T) and a request to the store from the operations host
 * times out;
 * healing evidence: it answers again.
 */
import { undoPause } from '../rig/dead-man.ts';
import { pauseService, resumeService } from '../rig/faults.ts';
import { storeServiceOf } from '../rig/store.ts';
import { FaultNotLanded, type FaultPackage } from './fault.ts';

export const storeOutage: FaultPackage = {
  kind: 'store-outage',
  spec: {
    label: 'Object store stopped (SIGSTOP), then resumed',
    summary: 'SIGSTOP the store, SIGCONT.',
    colour: '#8c564b',
    targets: { roles: ['store'], what: 'the store', defaultRoles: ['store'] },
    fields: { required: ['durationS'], optional: [] },
    evidence: "the store's PID in state T and a request to it timing out; running and answering at the heal",
  },
  async inject(_fault, ctx) {
    const host = ctx.rig.store.host;
    const remote = ctx.remote(host);
    const service = storeServiceOf(ctx.rig.store);
    const heal = async () => ({ host, ...(await resumeService(remote, service)) });
    let paused;
    try {
      paused = await pauseService(remote, service);
    } catch (err) {
      await heal().catch(() => {});
      throw new FaultNotLanded((err as Error).message);
    }
    ctx.log(`store paused (pid ${paused.pid}); a request to it timed out after ${paused.requestTimedOutMs} ms`);
    return { evidence: { host, ...paused, signal: 'SIGSTOP' }, deadMan: undoPause(host, paused.pid), heal };
  },
};
