/**
 * The fault kinds' names, as plain data at the bottom of the layers, so that evidence
 * types (lib/evidence.ts) can name a kind without importing the chaos packages (which
 * import the engine plug, which imports the evidence types: a circle). chaos/kinds.ts
 * holds one package per name here and the compiler checks the two agree (a name without a
 * package, or a package without a name, does not compile). Adding a kind: its package in
 * chaos/, its name here and one line in chaos/kinds.ts.
 */

/** Every kind, in the registry's order (the report's, the schema's and the loader's). */
export const FAULT_KIND_NAMES = [
  'worker-kill',
  'coordinator-kill',
  'protocol-point',
  'store-outage',
  'partition',
  'packet-loss',
  'broker-restart',
  'process-pause',
  'store-tamper',
  'disk-full',
  'clock-step',
  'state-corruption',
  'lost-unsynced-writes',
  'store-bitrot',
] as const;

/** A fault kind's name. */
export type FaultKind = (typeof FAULT_KIND_NAMES)[number];
