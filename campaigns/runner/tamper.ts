/**
 * How the verdict reads store-tamper faults (docs/faults.md, "store-tamper"). Pure.
 *
 * The harness's own tampering must not be mistaken for the engine's. Each store-tamper
 * fault's landing evidence names the keys it touched, the time, and the original ETag; its
 * healing record says when the original was restored and the engine's reaction. From those:
 *  - a mutation the oracle recorded (a ledger line with `change`) on a tampered key, at or
 *    after the tamper and no later than the heal, or later but back to the original ETag
 *    (the restore, seen by the next pass), is the harness's: reported apart, not counted;
 *  - a key the oracle first judged while it was tampered (firstSeen inside the window, with
 *    another ETag than the original, or vanished before it could be read) makes the
 *    recount's comparison of the settled bucket with that judged version count one
 *    mutation: the harness's too;
 *  - anything else on those keys, and everything on other keys, counts against the engine;
 *  - a reaction 'accepted' (the engine recovered through the tampered key and went on
 *    without an integrity stop) fails the run: the engine took a foreign object as its own.
 */
import type { ChaosRecord, LedgerEntry } from '../../lib/evidence.ts';
import { readJsonl } from '../../lib/jsonl.ts';

/** ledger.jsonl of a run (empty when missing; a torn last line is skipped). */
export function readLedger(file: string): LedgerEntry[] {
  return readJsonl<LedgerEntry>(file);
}

export interface TamperWindow {
  faultId: string;
  variant: string;
  keys: string[];
  from: string;
  /** When the original was restored; null when the fault never healed. */
  healedAt: string | null;
  originalEtag: string | null;
  reaction: string | null;
}

export interface TamperAttribution {
  /** Oracle mutations (ledger change lines) caused by the harness's tampering. */
  oracleMutations: number;
  /** Recount mutations (keys judged while tampered) caused by it. */
  recountMutations: number;
  findings: string[];
}

/** The store-tamper faults of a run, from chaos.jsonl records. */
export function tamperWindows(chaos: readonly ChaosRecord[]): TamperWindow[] {
  const out = new Map<string, TamperWindow>();
  for (const r of chaos) {
    if (r.kind !== 'store-tamper') continue;
    const ev = (r.evidence ?? {}) as Record<string, unknown>;
    if (r.phase === 'landed') {
      const before = ev.before as { etag?: string } | undefined;
      out.set(r.faultId, {
        faultId: r.faultId,
        variant: String(ev.variant ?? ''),
        keys: Array.isArray(ev.keys) ? (ev.keys as unknown[]).map(String) : [],
        from: typeof ev.at === 'string' ? ev.at : r.t,
        healedAt: null,
        originalEtag: before?.etag ?? null,
        reaction: null,
      });
    } else if (r.phase === 'healed') {
      const w = out.get(r.faultId);
      if (!w) continue;
      w.healedAt = typeof ev.restoredAt === 'string' ? ev.restoredAt : r.t;
      w.reaction = typeof ev.reaction === 'string' ? ev.reaction : null;
    }
  }
  return [...out.values()];
}

const ms = (iso: string | undefined): number => (iso ? Date.parse(iso) : NaN);

/** The oracle's and the recount's mutations on tampered keys that the harness caused. */
export function attributeTamper(windows: readonly TamperWindow[], ledger: readonly LedgerEntry[]): TamperAttribution {
  const res: TamperAttribution = { oracleMutations: 0, recountMutations: 0, findings: [] };
  const counted = new Set<LedgerEntry>();
  const judgedTampered = new Set<string>();
  for (const w of windows) {
    const from = ms(w.from);
    const to = w.healedAt ? ms(w.healedAt) : Infinity;
    for (const key of w.keys) {
      const lines = ledger.filter((l) => l.key === key);
      const first = lines.find((l) => !l.change);
      if (first && !judgedTampered.has(key)) {
        const seen = ms(first.firstSeen);
        if (seen >= from && seen <= to && (first.etag !== w.originalEtag || lines.some((l) => l.change === 'vanished' && l.at === first.firstSeen))) {
          judgedTampered.add(key);
          res.recountMutations++;
          res.findings.push(`${w.faultId} (${w.variant}): ${key} was first judged while tampered (ETag ${first.etag}); the recount's mutation on it is the harness's`);
        }
      }
      let restoreSeen = false;
      for (const l of lines) {
        if (!l.change || counted.has(l)) continue;
        const at = ms(l.at);
        if (!(at >= from)) continue;
        let ours = at <= to;
        if (!ours && !restoreSeen && l.etag === w.originalEtag && l.change !== 'vanished') {
          ours = true;
          restoreSeen = true;
        }
        if (!ours) continue;
        counted.add(l);
        res.oracleMutations++;
        res.findings.push(`${w.faultId} (${w.variant}): mutation of ${key} (${l.change} at ${l.at}) is the harness's own tampering`);
      }
    }
  }
  return res;
}

/** Store-tamper faults where the engine took the foreign object as its own (reaction 'accepted'). */
export function acceptedForeign(windows: readonly TamperWindow[]): TamperWindow[] {
  return windows.filter((w) => w.reaction === 'accepted');
}
