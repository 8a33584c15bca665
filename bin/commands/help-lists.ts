/**
 * Names the help texts list, read from their registries so the help cannot drift: each
 * engine's mutants (engine/index.ts -> the plug's `mutants`, Clink's in
 * engine/clink/mutants/index.ts) and the fault kinds (chaos/kinds.ts FAULT_PACKAGES).
 */
import { FAULT_PACKAGES } from '../../chaos/kinds.ts';
import { ENGINE_NAMES, loadEngine } from '../../engine/index.ts';
import { wrapText as wrap } from '../../lib/cli.ts';

/** "clink: a, b, c; flink: none" wrapped for a help text. */
export function mutantNamesHelp(): string {
  const parts = ENGINE_NAMES.map((e) => {
    const names = loadEngine(e).mutants.map((m) => m.name);
    return `${e}: ${names.length ? names.join(', ') : '(none)'}`;
  });
  return wrap(`Mutants by engine -- ${parts.join('; ')}.`);
}

export function faultKindsHelp(): string {
  return wrap(`Fault kinds (docs/faults.md) -- ${Object.keys(FAULT_PACKAGES).join(', ')}.`);
}
