/**
 * `rig down`: stops everything the rig started and removes every trace of it.
 *
 *   1. over SSH, where a host answers: heal every clink-qual-tagged iptables rule and stop
 *      every service under <dataDir>/services (TERM, then KILL);
 *   2. locally: kill what the teardown journal lists and whatever still runs in a cq-*
 *      namespace or under stateDir, delete the namespaces, veths and bridge, and remove
 *      tagged rules in the root namespace;
 *   3. remove rig.json, the credentials, the keys, the known-hosts file, the journal and
 *      the hosts' runtime files. The uploaded components (<host>/opt, <host>/bin) are kept
 *      so the next `rig up` skips their upload by sha256; --purge removes them too.
 *
 * Idempotent: with nothing up it checks and succeeds.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import { stateDir } from '../lib/paths.ts';
import { clearLocal, localLeftovers, sshDir } from './local.ts';
import { removeTaggedRules, stopAllServices } from './services.ts';
import { closeAllRemotes, SshRemote } from './ssh.ts';
import { readRigState, rigStatePath } from './state.ts';
import { credentialsPath } from './store.ts';

/** Keeps <host>/opt and <host>/bin (uploaded components) unless purge. */
export function removeRuntimeFiles(purge: boolean): void {
  const root = stateDir();
  for (const f of [rigStatePath(), credentialsPath(), sshDir(), path.join(root, 'teardown.jsonl')]) rmSync(f, { recursive: true, force: true });
  const hosts = path.join(root, 'hosts');
  if (!existsSync(hosts)) return;
  if (purge) {
    rmSync(hosts, { recursive: true, force: true });
    return;
  }
  for (const h of readdirSync(hosts)) {
    for (const entry of readdirSync(path.join(hosts, h))) {
      if (entry === 'opt' || entry === 'bin') continue;
      rmSync(path.join(hosts, h, entry), { recursive: true, force: true });
    }
  }
}

export interface RigDownResult {
  hostsStopped: string[];
  hostsUnreachable: string[];
  killed: number;
  namespaces: number;
  links: number;
  rules: number;
}

export async function rigDown(opts: { purge?: boolean; log?: (l: string) => void } = {}): Promise<RigDownResult> {
  const log = opts.log ?? (() => {});
  const result: RigDownResult = { hostsStopped: [], hostsUnreachable: [], killed: 0, namespaces: 0, links: 0, rules: 0 };
  if (existsSync(rigStatePath())) {
    const state = readRigState();
    await Promise.all(
      state.hosts.map(async (h) => {
        const r = new SshRemote(h, { readyTimeoutMs: 5_000 });
        try {
          result.rules += await removeTaggedRules(r);
          const stopped = await stopAllServices(r, state.kind === 'local' ? 3_000 : 10_000);
          result.hostsStopped.push(h.name);
          if (stopped.length) log(`${h.name}: stopped ${stopped.join(', ')}`);
        } catch (err) {
          result.hostsUnreachable.push(h.name);
          log(`${h.name}: not reachable over SSH (${(err as Error).message.split('\n')[0]}); its processes are killed locally if it is a local host`);
        } finally {
          await r.close();
        }
      }),
    );
  }
  await closeAllRemotes();
  if (process.platform === 'linux' && process.getuid?.() === 0) {
    const c = await clearLocal(log);
    result.killed = c.killed;
    result.namespaces = c.namespaces;
    result.links = c.links;
    result.rules += c.rules;
    const left = localLeftovers();
    if (left.namespaces.length || left.links.length || left.pids.length || left.mounts.length)
      throw new QualError(
        'INTERNAL',
        `rig down left things behind: namespaces [${left.namespaces.join(', ')}], links [${left.links.join(', ')}], processes [${left.pids.join(', ')}], mounts [${left.mounts.join(', ')}]`,
      );
  }
  removeRuntimeFiles(Boolean(opts.purge));
  return result;
}
