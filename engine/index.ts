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

export function loadEngine(name: string): Engine {
  const make = ENGINES[name];
  if (!make) throw new QualError('BAD_ARGUMENTS', `unknown engine '${name}' (known: ${ENGINE_NAMES.join(', ')})`);
  return make();
}
