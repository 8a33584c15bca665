/**
 * The engines the harness can drive, by name. Clink is bundled; another engine is one
 * more entry here and one more folder beside engine/clink/.
 */
import { QualError } from '../lib/errors.ts';
import type { Engine } from './engine.ts';
import { clinkEngine } from './clink/plug.ts';
import { flinkEngine } from './flink/plug.ts';

const ENGINES: Record<string, () => Engine> = {
  clink: () => clinkEngine(),
  flink: () => flinkEngine(),
};

export const ENGINE_NAMES: readonly string[] = Object.keys(ENGINES);

/** The engine of that name; QualError('BAD_ARGUMENTS') (exit 254) for a name it does not own (`__proto__`, `toString` included). */
export function loadEngine(name: string): Engine {
  const make = Object.hasOwn(ENGINES, name) ? ENGINES[name] : undefined;
  if (!make) throw new QualError('BAD_ARGUMENTS', `unknown engine '${name}' (known: ${ENGINE_NAMES.join(', ')})`);
  return make();
}
