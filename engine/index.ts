/**
 * The engines the harness can drive, by name. Clink is bundled; another engine is one
 * more entry here and one more folder beside engine/clink/.
 */
import { QualError } from '../lib/errors.ts';
import type { Engine } from './engine.ts';
import { clinkEngine } from './clink/plug.ts';
import { flinkEngine } from './flink/plug.ts';

/** How a campaign builds its engine: the job profile (engine.profile) among the plug's Engine.jobProfiles. */
export interface EngineOptions {
  profile?: string;
}

const ENGINES: Record<string, (o: EngineOptions) => Engine> = {
  clink: () => clinkEngine(),
  flink: (o) => flinkEngine(o.profile !== undefined ? { profile: o.profile } : {}),
};

export const ENGINE_NAMES: readonly string[] = Object.keys(ENGINES);

/**
 * The engine of that name, deploying the job profile `opts.profile` (the plug's default
 * without one); QualError('BAD_ARGUMENTS') (exit 254) for a name it does not own
 * (`__proto__`, `toString` included) or a profile the plug does not offer.
 */
export function loadEngine(name: string, opts: EngineOptions = {}): Engine {
  const make = Object.hasOwn(ENGINES, name) ? ENGINES[name] : undefined;
  if (!make) throw new QualError('BAD_ARGUMENTS', `unknown engine '${name}' (known: ${ENGINE_NAMES.join(', ')})`);
  const engine = make(opts);
  if (opts.profile !== undefined && !(engine.jobProfiles ?? []).includes(opts.profile)) {
    const known = engine.jobProfiles?.length ? `known: ${engine.jobProfiles.join(', ')}` : 'it deploys one job and has no profiles';
    throw new QualError('BAD_ARGUMENTS', `engine ${name} has no job profile '${opts.profile}' (${known})`);
  }
  return engine;
}
