/**
 * Every fault kind, one package each. Adding a kind: one file (its package, with its spec),
 * one line here, its name in lib/evidence.ts's FAULT_KINDS (the compiler then asks for the
 * line here), and `npm run schema` to regenerate campaigns/schema.json.
 */
import type { FaultKind } from '../lib/evidence.ts';
import { brokerRestart } from './broker-restart.ts';
import { clockStep } from './clock-step.ts';
import { coordinatorKill } from './coordinator-kill.ts';
import { diskFull } from './disk-full.ts';
import type { FaultKindSpec, FaultPackage } from './fault.ts';
import { packetLoss } from './packet-loss.ts';
import { partition } from './partition.ts';
import { processPause } from './process-pause.ts';
import { protocolPoint } from './protocol-point.ts';
import { storeOutage } from './store-outage.ts';
import { storeTamper } from './store-tamper.ts';
import { workerKill } from './worker-kill.ts';

export const FAULT_PACKAGES: Record<FaultKind, FaultPackage> = {
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
};

/** Each kind's spec (label, colour, schema fragments, targets, evidence), in FAULT_KINDS order. */
export const FAULT_SPECS: Readonly<Record<FaultKind, FaultKindSpec>> = Object.fromEntries(Object.entries(FAULT_PACKAGES).map(([k, p]) => [k, p.spec])) as Record<FaultKind, FaultKindSpec>;

export function packageFor(kind: FaultKind): FaultPackage {
  return FAULT_PACKAGES[kind];
}
