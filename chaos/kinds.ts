/**
 * Every fault kind, one package each: `FAULT_KINDS` and the packages come from here; the
 * names themselves are data in lib/fault-kinds.ts (so that lib/ need not import chaos/),
 * and the compiler checks that every name there has a package here and nothing else does.
 * Adding a kind: one file (its package, with its spec), its name in lib/fault-kinds.ts, one
 * line here, then `npm run schema` regenerates campaigns/schema.json (CI checks it is current).
 */
import { brokerRestart } from './broker-restart.ts';
import { clockStep } from './clock-step.ts';
import { coordinatorKill } from './coordinator-kill.ts';
import { diskFull } from './disk-full.ts';
import type { FaultKindSpec, FaultPackage } from './fault.ts';
import { FAULT_KIND_NAMES, type FaultKind } from '../lib/fault-kinds.ts';
import { packetLoss } from './packet-loss.ts';
import { partition } from './partition.ts';
import { processPause } from './process-pause.ts';
import { stateCorruption } from './state-corruption.ts';
import { lostUnsyncedWrites } from './lost-unsynced-writes.ts';
import { protocolPoint } from './protocol-point.ts';
import { storeOutage } from './store-outage.ts';
import { storeTamper } from './store-tamper.ts';
import { storeBitrot } from './store-bitrot.ts';
import { workerKill } from './worker-kill.ts';

export const FAULT_PACKAGES = {
  'worker-kill': workerKill,
  'coordinator-kill': coordinatorKill,
  'protocol-point': protocolPoint,
  'store-outage': storeOutage,
  partition,
  'packet-loss': packetLoss,
  'broker-restart': brokerRestart,
  'process-pause': processPause,
  'store-tamper': storeTamper,
  'disk-full': diskFull,
  'clock-step': clockStep,
  'state-corruption': stateCorruption,
  'lost-unsynced-writes': lostUnsyncedWrites,
  'store-bitrot': storeBitrot,
} as const satisfies Record<FaultKind, FaultPackage>;

/** A fault kind's name (lib/fault-kinds.ts). */
export type { FaultKind };

/** Every kind, in the registry's order (the report's, the schema's and the loader's). */
export const FAULT_KINDS: readonly FaultKind[] = FAULT_KIND_NAMES;

/** Each kind's spec (label, colour, schema fragments, targets, evidence), in FAULT_KINDS order. */
export const FAULT_SPECS: Readonly<Record<FaultKind, FaultKindSpec>> = Object.fromEntries(Object.entries(FAULT_PACKAGES).map(([k, p]) => [k, p.spec])) as Record<FaultKind, FaultKindSpec>;

export function packageFor(kind: FaultKind): FaultPackage {
  return FAULT_PACKAGES[kind];
}
