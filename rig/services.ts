/**
 * What runs on a host, read over its Remote from the service folders rig/process.ts keeps
 * (<dataDir>/services/<name>/pid): the rig's own services and anything an engine started
 * the same way.
 */
import { SERVICE_PID_SH, shQuote, stopService } from './process.ts';
import type { Remote } from './remote.ts';

export interface HostService {
  name: string;
  pid: number | null;
  /** running, paused (SIGSTOPped) or dead (no live process for the recorded PID, or that PID now names another process). */
  state: 'running' | 'paused' | 'dead';
}

export async function listServices(remote: Remote): Promise<HostService[]> {
  const dir = `${remote.host.dataDir}/services`;
  const r = await remote.exec(
    `${SERVICE_PID_SH}; cd ${shQuote(dir)} 2>/dev/null || exit 0; for d in */; do [ -d "$d" ] || continue; n=\${d%/}; svc_pid "$n"; s=gone; if [ -n "$p" ]; then s=$(sed 's/.*) //' /proc/$p/stat 2>/dev/null | cut -d' ' -f1); fi; echo "$n \${p:-0} \${s:-gone}"; done`,
    { check: false, timeoutMs: 15_000 },
  );
  const out: HostService[] = [];
  for (const line of r.stdout.split('\n')) {
    const [name, p, s] = line.trim().split(' ');
    if (!name) continue;
    const pid = Number(p);
    const state = s === 'gone' || s === 'Z' || s === 'X' ? 'dead' : s === 'T' || s === 't' ? 'paused' : 'running';
    out.push({ name, pid: state === 'dead' || !pid ? null : pid, state });
  }
  return out;
}

/** Stops every live service on the host (TERM, then KILL after graceMs). Returns their names. */
export async function stopAllServices(remote: Remote, graceMs = 10_000): Promise<string[]> {
  const live = (await listServices(remote)).filter((s) => s.state !== 'dead');
  await Promise.all(live.map((s) => stopService(remote, s.name, graceMs)));
  return live.map((s) => s.name);
}

/** Removes the host's iptables rules tagged clink-qual (all, or one fault's). Returns how many. */
export async function removeTaggedRules(remote: Remote, faultId?: string): Promise<number> {
  const r = await remote.exec(removeTaggedRulesCommand(faultId), { check: false });
  return Number(r.stdout.trim()) || 0;
}

/** The bash command removeTaggedRules runs (also a dead-man timer's undo, rig/dead-man.ts); prints how many rules it removed. */
export function removeTaggedRulesCommand(faultId?: string): string {
  if (faultId !== undefined && !/^[A-Za-z0-9._-]+$/.test(faultId)) throw new Error(`bad fault id ${faultId}`);
  const pattern = faultId === undefined ? 'clink-qual' : `clink-qual:${faultId.replace(/\./g, '\\.')}("| |$)`;
  return `command -v iptables >/dev/null || exit 0; n=0; while IFS= read -r line; do eval "iptables -w 5 \${line/#-A /-D }" && n=$((n+1)); done < <(iptables -w 5 -S | grep -E -- '^-A .*${pattern}'); echo $n`;
}
