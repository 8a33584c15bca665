/**
 * A fault kind is one package behind one interface (after Jepsen's nemesis packages): how
 * it lands (with evidence that it did), and how it heals. The controller (controller.ts)
 * schedules them, records every phase in chaos.jsonl, measures recovery, and heals
 * whatever is still active when the run is aborted.
 *
 * Adding a fault kind: one file here (its package, with its FaultKindSpec: label, colour,
 * schema fragments, targets, evidence), one line in kinds.ts (the only list of kinds:
 * `FaultKind` and `FAULT_KINDS` come from it), and `npm run schema` (campaigns/schema.json's
 * kind-dependent definitions are generated from the specs; a unit test fails when stale).
 * The loader's target rules, the report's labels and the timeline's colours read the spec.
 */
import type { Engine } from '../engine/engine.ts';
import type { FaultKind, PlannedFault } from '../lib/evidence.ts';
import type { DeadManHeal } from '../rig/dead-man.ts';
import type { Remote } from '../rig/remote.ts';
import type { RigState, StoreCredentials, StoreKind } from '../rig/types.ts';

export interface FaultContext {
  rig: RigState;
  remote(hostName: string): Remote;
  engine: Engine;
  credentials: StoreCredentials;
  checkpointIntervalMs: number;
  /** The campaign's recovery deadline (deadlines.recoveryS): how long a recovery may take, e.g. before a recovery-only point can fire. */
  recoveryDeadlineMs?: number;
  /** The run's object key prefix (ends in '/'): where a store-tamper fault may act. */
  prefix?: string;
  log(line: string): void;
}

/** A landed fault, held until healed. */
export interface LandedFault {
  /** What shows it landed (PID gone, request timed out, TCP blocked, fired record...). */
  evidence: Record<string, unknown>;
  /** Undoes the fault (restart, SIGCONT, remove rules); returns what shows it healed. Idempotent. */
  heal(): Promise<Record<string, unknown>>;
  /**
   * Checked after the next completed checkpoint: extra conditions for calling the fault
   * recovered (coordinator kill: the workers' PIDs did not change). Returns a failure
   * description, or null when recovered.
   */
  verifyRecovery?(): Promise<string | null>;
  /**
   * How the target host undoes the fault by itself if the controller never heals it (it died
   * or lost the network): the controller sets it as a timer on that host when the fault lands,
   * for the fault's duration plus DEAD_MAN_MARGIN_S, and stops it at the heal (rig/dead-man.ts).
   * Every fault that holds a host in a state for a duration carries one.
   */
  deadMan?: DeadManHeal;
  /**
   * Held through the recount's first pass (chaos/controller.ts): the controller does not heal
   * it at the end of its hold, nor in the drain; it stays in force until the run's first
   * recount pass has read the bucket with it (campaigns/runner/held-recount.ts), and is healed
   * (ChaosController.healHeld) before the recount that decides the verdict. For a fault whose
   * damage is only seen by a reader after the run (a committed object rotten on the store's
   * disk). A fault with a dead-man timer is never held.
   */
  holdThroughRecount?: boolean;
}

/** What the controller lets a package signal while it injects. */
export interface InjectHooks {
  /**
   * The later steps of a composition may proceed now, before this fault has shown that it
   * landed: this fault waits for them (a recovery-only protocol point is armed and fires
   * only once a later worker kill causes a recovery).
   */
  ready(): void;
}

/** The fields a fault may carry beside kind, count and targets (campaigns/schema.json's faultFields). */
export const FAULT_FIELDS = ['durationS', 'share', 'points', 'point', 'variant', 'offsetS'] as const;
export type FaultField = (typeof FAULT_FIELDS)[number];
export type HostRole = 'worker' | 'coordinator' | 'broker' | 'store';

/**
 * Everything the harness says of a fault kind outside its injection, declared once in its
 * package: the campaign schema's fragments (generated into campaigns/schema.json by
 * `npm run schema`), the loader's target rules, the report's label and the timeline's colour.
 */
export interface FaultKindSpec {
  /** The report's row label, e.g. 'Worker SIGKILL, then restarted'. */
  label: string;
  /** One sentence for the schema's description of the kind (editor completion shows it). */
  summary: string;
  /** The timeline's band colour. */
  colour: string;
  /** Which host roles it may target (`what` names them in errors) and the default targets' roles. */
  targets: { roles: HostRole[]; what: string; defaultRoles: HostRole[] };
  /** The fields it requires and those it allows; every other fault field is refused. */
  fields: { required: FaultField[]; optional: FaultField[] };
  /** The values its `variant` may take, when it takes one (the schema refuses any other for this kind). */
  variants?: readonly string[];
  /** The stores it can land on, when it depends on one's own files (the loader refuses it on another); absent: any store. */
  stores?: readonly StoreKind[];
  /** The variants whose landing is held through the recount's first pass (LandedFault.holdThroughRecount); `campaign plan` shows them so. */
  heldThroughRecount?: readonly string[];
  /** What its landing and heal evidence in chaos.jsonl shows. */
  evidence: string;
}

export interface FaultPackage {
  kind: FaultKind;
  spec: FaultKindSpec;
  /**
   * Injects the fault. Resolves with the landing evidence and the heal handle, or throws
   * FaultNotLanded when it could not show that the fault landed (after undoing any part of it).
   */
  inject(fault: PlannedFault, ctx: FaultContext, hooks?: InjectHooks): Promise<LandedFault>;
}

export class FaultNotLanded extends Error {
  readonly evidence: Record<string, unknown>;
  constructor(message: string, evidence: Record<string, unknown> = {}) {
    super(message);
    this.name = 'FaultNotLanded';
    this.evidence = evidence;
  }
}

export function hostsWithRole(rig: RigState, role: string): string[] {
  return rig.hosts.filter((h) => h.roles.includes(role as never)).map((h) => h.name);
}

/** The planned target, or the first host with the role when the plan named none. */
export function targetOrFirst(fault: PlannedFault, rig: RigState, role: string): string {
  if (fault.target) return fault.target;
  const h = hostsWithRole(rig, role)[0];
  if (!h) throw new FaultNotLanded(`the rig has no ${role} host`);
  return h;
}

export function hostAddress(rig: RigState, name: string): string {
  const h = rig.hosts.find((x) => x.name === name);
  if (!h) throw new FaultNotLanded(`no host named ${name} in the rig`);
  return h.address;
}
