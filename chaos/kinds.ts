/** Every fault kind, one package each. Adding a kind: one file, one line here. */
import type { FaultKind } from '../lib/evidence.ts';
import { brokerRestart } from './broker-restart.ts';
import { clockStep } from './clock-step.ts';
import { coordinatorKill } from './coordinator-kill.ts';
import { diskFull } from './disk-full.ts';
import type { FaultPackage } from './fault.ts';
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
  'disk-full': diskFull,
  'clock-step': clockStep,
  'store-tamper': storeTamper,
};

export function packageFor(kind: FaultKind): FaultPackage {
  return FAULT_PACKAGES[kind];
}
