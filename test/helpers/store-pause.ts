/**
 * Pausing the object store for real (SIGSTOP/SIGCONT), for the oracle's outage tests.
 *
 * - Development (CLINK_QUAL_S3_ENDPOINT set): the loopback MinIO's own process on this
 *   machine, found as the `minio server` process listening on that endpoint's port.
 * - Otherwise, the rig: the store host's store service (`minio`, or `seaweedfs` when rig.json
 *   says the rig runs SeaweedFS), signalled over SSH (rig/process.ts signalService through
 *   rig/ssh.ts remoteFor).
 *
 * Always resume in a finally: a store left stopped would hang every later test.
 */
import { execFileSync } from 'node:child_process';

export interface StorePause {
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** What is paused, for test messages. */
  describe: string;
  close(): Promise<void>;
}

function devMinioPid(endpoint: string): number {
  const port = new URL(endpoint).port;
  const out = execFileSync('pgrep', ['-f', 'minio server'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  for (const pid of out) {
    let cmd = '';
    try {
      cmd = execFileSync('cat', [`/proc/${pid}/cmdline`], { encoding: 'utf8' }).replace(/\0/g, ' ');
    } catch {
      continue;
    }
    if (cmd.includes(`:${port}`)) return pid;
  }
  throw new Error(`no 'minio server' process listening on port ${port} found on this machine`);
}

export async function storePause(): Promise<StorePause> {
  const endpoint = process.env.CLINK_QUAL_S3_ENDPOINT;
  if (endpoint) {
    const pid = devMinioPid(endpoint);
    return {
      describe: `dev MinIO pid ${pid}`,
      async pause() {
        process.kill(pid, 'SIGSTOP');
      },
      async resume() {
        process.kill(pid, 'SIGCONT');
      },
      async close() {},
    };
  }
  const { readRigState } = await import('../../rig/state.ts');
  const { remoteFor } = await import('../../rig/ssh.ts');
  const { signalService } = await import('../../rig/process.ts');
  const { storeServiceOf } = await import('../../rig/store.ts');
  const state = readRigState();
  const service = storeServiceOf(state.store);
  const host = state.hosts.find((h) => h.name === state.store.host) ?? state.hosts.find((h) => h.roles.includes('store'));
  if (!host) throw new Error('the rig state names no store host');
  const remote = remoteFor(host);
  return {
    describe: `rig store ${host.name} (service ${service})`,
    async pause() {
      const pid = await signalService(remote, service, 'STOP');
      if (pid === null) throw new Error(`${host.name}: ${service} is not running`);
    },
    async resume() {
      await signalService(remote, service, 'CONT');
    },
    async close() {
      await remote.close();
    },
  };
}
