/**
 * The report's "Claim under test", built from what the run scheduled and what landed: a
 * fault class is named only when a fault of it was in the plan (plan.json), landed with
 * evidence and was recovered from (chaos.jsonl, reports/faults.ts), and "the object store
 * is down during a recovery" only when a composition put a worker kill inside a store
 * outage and every step of it landed and recovered. A run that showed no fault class
 * claims delivery only.
 */
import type { FaultKind } from '../lib/evidence.ts';
import { FAULT_KINDS } from '../chaos/kinds.ts';
import type { FaultOutcome } from './faults.ts';

/** Each fault class as the claim names it, after "and keeps doing so when". */
export const CLAIM_CLAUSES: Readonly<Record<FaultKind, string>> = {
  'worker-kill': 'its worker processes are killed',
  'coordinator-kill': 'its coordinator is killed',
  'protocol-point': "its processes are killed inside the commit protocol's own windows",
  'store-outage': 'the object store is unavailable',
  partition: 'a host is cut off from the coordinator',
  'packet-loss': "a host's packets are dropped",
  'broker-restart': 'a Kafka broker restarts',
  'process-pause': 'its processes are frozen past their timeouts',
  'store-tamper': 'a foreign writer changes objects under its prefix',
  'disk-full': "an engine host's state disk is full",
  'clock-step': "an engine host's wall clock steps",
  'state-corruption': "a record of the engine's durable state is corrupted at rest",
  'lost-unsynced-writes': 'its processes crash and lose the writes they had not fsynced',
  'store-bitrot': "bytes of the object store's own data rot on its disk",
};

/** The clause of the decisive composition, when one was shown. */
export const STORE_DOWN_DURING_RECOVERY = 'the object store is down during a recovery';

/** The fault kinds the plan scheduled of which at least one fault landed and was recovered from, in FAULT_KINDS order. */
export function shownKinds(outcomes: FaultOutcome[]): FaultKind[] {
  return FAULT_KINDS.filter((k) => outcomes.some((o) => o.kind === k && o.planned !== undefined && o.status === 'survived'));
}

/**
 * Runs of a composition (one `<name>#<n>` each) in which a worker kill landed while a store
 * outage of the same run was in force, and every step of the run landed and was recovered
 * from: the store was down during a recovery, and the engine came through it.
 */
export function storeDownDuringRecovery(outcomes: FaultOutcome[]): number {
  const runs = new Map<string, FaultOutcome[]>();
  for (const o of outcomes) if (o.composition) runs.set(o.composition, [...(runs.get(o.composition) ?? []), o]);
  let n = 0;
  for (const steps of runs.values()) {
    if (!steps.every((o) => o.status === 'survived')) continue;
    const outages = steps.filter((o) => o.kind === 'store-outage' && o.landedAt);
    const kills = steps.filter((o) => o.kind === 'worker-kill' && o.landedAt);
    const inside = kills.some((k) =>
      outages.some((s) => {
        const at = Date.parse(k.landedAt!);
        const end = s.healedAt ? Date.parse(s.healedAt) : Infinity;
        return at >= Date.parse(s.landedAt!) && at <= end;
      }),
    );
    if (inside) n++;
  }
  return n;
}

/** "a", "a and b", "a, b and c". */
function series(xs: string[]): string {
  return xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;
}

/** The claim under test, one sentence: the engine, its sink, and the fault classes this run showed. */
export function claimUnderTest(engine: string, sink: string, outcomes: FaultOutcome[]): string {
  const head = `${engine} delivers every event exactly once into S3-compatible object storage through \`${sink}\``;
  const clauses = shownKinds(outcomes).map((k) => CLAIM_CLAUSES[k]);
  if (storeDownDuringRecovery(outcomes) > 0) clauses.push(STORE_DOWN_DURING_RECOVERY);
  if (!clauses.length) return `${head}. No scheduled fault landed and was recovered from in this run, so no fault class is part of the claim.`;
  return `${head}, and keeps doing so ${series(clauses.map((c) => `when ${c}`))}.`;
}
