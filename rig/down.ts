/**
 * `rig down`: stops everything the rig started and removes every trace of it.
 *
 *   1. over SSH, where a host answers: heal every clink-qual-tagged iptables rule and stop
 *      every service under <dataDir>/services (TERM, then KILL);
 *   2. locally: kill what the teardown journal lists and whatever still runs in a cq-*
 *      namespace or under stateDir, delete the namespaces, veths and bridge, and remove
 *      tagged rules in the root namespace;
 *      On an inventory rig (rig.json's kind, or `--inventory FILE` once rig.json is gone)
 *      also stop every dead-man timer and remove the rig's files from each host's dataDir
 *      (rig/host-files.ts): all but what is kept below, or with --purge all of it; and
 *      step 2 is skipped (the local rig's cq-* namespaces are not this rig's) unless this
 *      state directory's own journal made namespaces: an inventory re-deployed over the
 *      local rig's hosts (`rig up --inventory` after `rig up`) holds them, and must free them;
 *   3. remove rig.json, the keys, the known-hosts file, the journal and the hosts' runtime
 *      files. The uploaded components (<host>/opt, <host>/bin) are kept so the next `rig up`
 *      skips their upload by sha256, and the store's data (<host>/minio-data) with the
 *      credentials that open it, so a stored run can be verified again after `rig up`;
 *      (<host>/seaweedfs-data likewise for SeaweedFS);
 *      --purge removes them too.
 *
 * Idempotent: with nothing up it checks and succeeds.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import { stateDir } from '../lib/paths.ts';
import { disarmDeadMan } from './dead-man.ts';
import { removeHostFilesCommand } from './host-files.ts';
import { readInventory } from './inventory.ts';
import { readJournal, type JournalEntry } from './journal.ts';
import { clearLocal, localLeftovers, sshDir } from './local.ts';
import { removeTaggedRules, stopAllServices } from './services.ts';
import { closeAllRemotes, SshRemote } from './ssh.ts';
import { readRigState, rigStatePath } from './state.ts';
import { credentialsPath, MINIO_DRIVE_LAYOUTS, minioDataDir, STORE_DATA_DIRS } from './store.ts';

/** What each host's directory keeps across `rig down` (not --purge): uploaded components and each store's data (each MinIO drive layout's too). */
export const KEPT_ON_DOWN: readonly string[] = ['opt', 'bin', ...new Set([...Object.values(STORE_DATA_DIRS), ...MINIO_DRIVE_LAYOUTS.map(minioDataDir)])];

/**
 * The paths `rig down` removes, given the state directory and each host directory's
 * entries: rig.json, the keys, the journal, and every host entry but KEPT_ON_DOWN; with
 * purge, also the store's credentials and the whole hosts tree.
 */
export function runtimeFilesToRemove(root: string, purge: boolean, hostEntries: Record<string, readonly string[]>, files = { rigState: rigStatePath(), credentials: credentialsPath(), ssh: sshDir() }): string[] {
  const out = [files.rigState, files.ssh, path.join(root, 'teardown.jsonl')];
  if (purge) return [...out, files.credentials, path.join(root, 'hosts')];
  for (const [h, entries] of Object.entries(hostEntries)) for (const e of entries) if (!KEPT_ON_DOWN.includes(e)) out.push(path.join(root, 'hosts', h, e));
  return out;
}

/** Removes runtimeFilesToRemove's paths. */
export function removeRuntimeFiles(purge: boolean): void {
  const root = stateDir();
  const hosts = path.join(root, 'hosts');
  const entries: Record<string, string[]> = {};
  if (existsSync(hosts)) for (const h of readdirSync(hosts)) entries[h] = readdirSync(path.join(hosts, h));
  for (const f of runtimeFilesToRemove(root, purge, entries)) rmSync(f, { recursive: true, force: true });
}

/**
 * Whether `rig down` clears the local rig (step 2): always for the local rig; for an
 * inventory rig only when this state directory's journal recorded namespaces, i.e. the
 * inventory's hosts are the local rig's own (their namespaces and state filesystems would
 * otherwise outlive the down, and the state directory could not be removed).
 */
export function clearsLocalRig(inventory: boolean, journal: readonly JournalEntry[]): boolean {
  return !inventory || journal.some((e) => e.kind === 'netns');
}

export interface RigDownResult {
  hostsStopped: string[];
  hostsUnreachable: string[];
  killed: number;
  namespaces: number;
  links: number;
  rules: number;
}

/**
 * Takes the rig down. `inventory` names the inventory whose hosts to clear when rig.json is
 * gone (a `rig down --purge` after a `rig down`); with rig.json it must be an inventory rig's.
 */
export async function rigDown(opts: { purge?: boolean; inventory?: string; log?: (l: string) => void } = {}): Promise<RigDownResult> {
  const log = opts.log ?? (() => {});
  const result: RigDownResult = { hostsStopped: [], hostsUnreachable: [], killed: 0, namespaces: 0, links: 0, rules: 0 };
  const state = existsSync(rigStatePath()) ? readRigState() : undefined;
  if (state?.kind === 'local' && opts.inventory) throw new QualError('BAD_ARGUMENTS', `the rig that is up (${rigStatePath()}) is the local rig, not an inventory's: run 'rig down' without --inventory`);
  const inventory = state ? state.kind === 'inventory' : opts.inventory !== undefined;
  const hosts = state?.hosts ?? (opts.inventory ? readInventory(opts.inventory) : []);
  if (hosts.length) {
    await Promise.all(
      hosts.map(async (h) => {
        const r = new SshRemote(h, { readyTimeoutMs: 5_000 });
        try {
          // Before the rules: a timer must not fire its undo into the next rig.
          const timers = inventory ? await disarmDeadMan(r) : 0;
          result.rules += await removeTaggedRules(r);
          const stopped = await stopAllServices(r, inventory ? 10_000 : 3_000);
          if (inventory) {
            const files = await r.exec(removeHostFilesCommand(h.dataDir, Boolean(opts.purge), KEPT_ON_DOWN), { check: false, timeoutMs: 120_000 });
            if (files.code !== 0) log(`${h.name}: removing the rig's files from ${h.dataDir} exited ${files.code}: ${files.stderr.trim().split('\n').pop()}`);
          }
          result.hostsStopped.push(h.name);
          if (stopped.length || timers) log(`${h.name}: stopped ${[...stopped, ...(timers ? [`${timers} dead-man timer(s)`] : [])].join(', ')}`);
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
  // An inventory's state directory clears the local rig only when its own journal made it: cq-* namespaces found by name may be another rig's, in use.
  if (clearsLocalRig(inventory, readJournal()) && process.platform === 'linux' && process.getuid?.() === 0) {
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
