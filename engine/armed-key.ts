/**
 * The armed-points file's key for a point and what its process does there: the point's own
 * name to kill, `pause@<point>` to pause (engine/armed-points.ts has the file). Apart from
 * armed-points.ts so that the engines' own runtimes (Clink's bundle) read it without the
 * harness's SSH code.
 */
import type { FaultPointAction } from './engine.ts';

/** The armed file's key for `point` fired with `action` (a kill is the point's own name). */
export function armedKey(point: string, action: FaultPointAction = 'kill'): string {
  return action === 'pause' ? `pause@${point}` : point;
}
