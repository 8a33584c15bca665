/**
 * Where an engine runs on the rig: one coordinator host, the worker hosts, and the role of
 * each. Shared by the engine plugs (engine/clink/plug.ts, engine/flink/plug.ts) through
 * EngineHosts, the base of a plug that keeps the context deploy() was given.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import { serviceDir, shQuote } from '../rig/process.ts';
import type { Remote } from '../rig/remote.ts';
import type { HostSpec, RigState } from '../rig/types.ts';
import type { EngineContext, EngineRole } from './engine.ts';

export function coordinatorHost(rig: RigState): HostSpec {
  const h = rig.hosts.find((x) => x.roles.includes('coordinator'));
  if (!h) throw new QualError('PRECONDITION', 'the rig has no coordinator host');
  return h;
}

export function workerHosts(rig: RigState): HostSpec[] {
  const ws = rig.hosts.filter((x) => x.roles.includes('worker'));
  if (ws.length === 0) throw new QualError('PRECONDITION', 'the rig has no worker hosts');
  return ws;
}

/** Every engine host with its role, the coordinator first. */
export function engineHosts(rig: RigState): { host: HostSpec; role: EngineRole }[] {
  return [{ host: coordinatorHost(rig), role: 'coordinator' as EngineRole }, ...workerHosts(rig).map((host) => ({ host, role: 'worker' as EngineRole }))];
}

export function roleOf(rig: RigState, hostName: string): EngineRole {
  if (coordinatorHost(rig).name === hostName) return 'coordinator';
  if (workerHosts(rig).some((h) => h.name === hostName)) return 'worker';
  throw new QualError('BAD_ARGUMENTS', `${hostName} is not an engine host`);
}

/**
 * Downloads the files of one host that exist ([remote path, local name]) into hostDir
 * (created); a file that fails to download leaves <name>.error with the reason. Returns the
 * local paths written.
 */
export async function collectHostFiles(r: Remote, files: readonly (readonly [string, string])[], hostDir: string): Promise<string[]> {
  const written: string[] = [];
  mkdirSync(hostDir, { recursive: true });
  for (const [remotePath, name] of files) {
    const exists = await r.exec(`[ -f ${shQuote(remotePath)} ] && echo yes`, { check: false });
    if (exists.stdout.trim() !== 'yes') continue;
    const local = path.join(hostDir, name);
    try {
      await r.download(remotePath, local);
      written.push(local);
    } catch (err) {
      writeFileSync(`${local}.error`, String((err as Error).message));
    }
  }
  return written;
}

/** The base of an engine plug: the context deploy() was given, and the hosts it names. */
export abstract class EngineHosts {
  abstract readonly name: string;
  /** The context of the last deploy(), or null before it. */
  protected deployedCtx: EngineContext | null = null;

  protected get ctx(): EngineContext {
    if (!this.deployedCtx) throw new QualError('PRECONDITION', `${this.name}: deploy() was not called`);
    return this.deployedCtx;
  }

  protected log(line: string): void {
    this.deployedCtx?.log?.(line);
  }

  get coordinatorHost(): HostSpec {
    return coordinatorHost(this.ctx.rig);
  }

  get workerHosts(): HostSpec[] {
    return workerHosts(this.ctx.rig);
  }

  protected engineHosts(): { host: HostSpec; role: EngineRole }[] {
    return engineHosts(this.ctx.rig);
  }

  protected remote(host: HostSpec | string): Remote {
    return this.ctx.remote(typeof host === 'string' ? host : host.name);
  }

  protected roleOf(hostName: string): EngineRole {
    return roleOf(this.ctx.rig, hostName);
  }

  /** The last line of each worker host's service log that contains `text`, for the hosts that have one. */
  protected async lastWorkerLogLines(service: string, text: string): Promise<{ host: string; line: string }[]> {
    const out: { host: string; line: string }[] = [];
    for (const host of this.workerHosts) {
      const r = this.remote(host);
      const g = await r.exec(`grep -h ${shQuote(text)} ${shQuote(serviceDir(r, service))}/out.log 2>/dev/null | tail -n 1`, { check: false });
      const line = g.stdout.trim();
      if (line) out.push({ host: host.name, line });
    }
    return out;
  }
}
