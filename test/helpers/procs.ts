/**
 * The tests' own view of the machine's processes, read from /proc without the rig's code
 * (rig/local.ts processesUnderStateDir is what they check): the processes whose command
 * line names a path under one of the given folders, or whose working directory is in one.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** `PID: command line` (cut to `width`) of each process with a path under one of `roots` in its command line, or its cwd there; `skip` PIDs are left out. */
export function processesUnder(roots: readonly string[], opts: { skip?: readonly number[]; width?: number } = {}): string[] {
  const bare = roots.map((r) => r.replace(/\/+$/, ''));
  const out: string[] = [];
  for (const p of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    if (opts.skip?.includes(Number(p))) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${p}/cwd`);
      } catch {
        /* kernel threads, races */
      }
      if (bare.some((r) => cmd.includes(`${r}/`) || cwd === r || cwd.startsWith(`${r}/`))) out.push(`${p}: ${cmd.slice(0, opts.width ?? 120)}`);
    } catch {
      /* gone */
    }
  }
  return out;
}
