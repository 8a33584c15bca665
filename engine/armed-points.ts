/**
 * The armed-points file both engine plugs write on a host (Clink's faults/armed.json, the
 * Flink agent's armed.json): a JSON object, fault point → times it is still to fire. The
 * engine's process reads it at each point; the plug replaces it whole (write, then rename),
 * so the process never reads a half-written file.
 *
 * A point armed to pause its process instead of killing it (FaultPointAction 'pause') is
 * the key `pause@<point>`: the file stays a flat object of names to counts, which both
 * readers (Clink's TypeScript, the agent's Java) already parse.
 */
import path from 'node:path';
import { shQuote } from '../rig/process.ts';
import type { Remote } from '../rig/remote.ts';
import { armedKey } from './armed-key.ts';
import type { FaultPointAction } from './engine.ts';

export { armedKey };

/** The points armed in `file` now ({} when there is none, or it cannot be read). */
export async function readArmed(r: Remote, file: string): Promise<Record<string, number>> {
  const cur = await r.exec(`cat ${shQuote(file)} 2>/dev/null`, { check: false });
  try {
    return cur.stdout.trim() ? (JSON.parse(cur.stdout) as Record<string, number>) : {};
  } catch {
    return {};
  }
}

/** Replaces `file` with `armed`, atomically. */
export async function writeArmed(r: Remote, file: string, armed: Record<string, number>): Promise<void> {
  const tmp = `${file}.plug-tmp`;
  await r.exec(`mkdir -p ${shQuote(path.posix.dirname(file))}`);
  await r.writeFile(tmp, JSON.stringify(armed));
  await r.exec(`mv -f ${shQuote(tmp)} ${shQuote(file)}`);
}

/** Arms `point` for `times` firings (killing, or pausing, its process), keeping the other points armed in `file`; returns the times set. */
export async function armPoint(r: Remote, file: string, point: string, times = 1, action: FaultPointAction = 'kill'): Promise<number> {
  const armed = await readArmed(r, file);
  armed[armedKey(point, action)] = times;
  await writeArmed(r, file, armed);
  return times;
}
