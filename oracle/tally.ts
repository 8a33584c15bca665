/**
 * The oracle's definitions, in one place, shared by the incremental judge (oracle/judge.ts)
 * and the from-scratch recount (oracle/recount.ts) so the two cannot drift apart.
 *
 * An object's body is split into lines at '\n'; a body ending in '\n' has no empty last
 * line, a body not ending in '\n' has its last segment judged as a line too. Each line is
 * judged against the seed (oracle/generator.ts judgeLine):
 *
 *   event      exactly the canonical line of (p, seq) with 0 <= p < partitions
 *   foreign    a JSON object that is not such a line: no valid p or seq, p outside
 *              [0, partitions), or any byte differing from the regenerated line (id, key,
 *              payload, field order, spacing)
 *   unparsable anything else (not JSON, not an object, an empty line, garbage)
 *
 * The counters (lib/evidence.ts Counters):
 *
 *   duplicates   each event line whose (p, seq) was already committed, in the same object
 *                or an earlier one. A triple counts 2.
 *   gaps         per partition p, the sequences missing from [0, h], h being the highest
 *                committed seq below produced[p]. A gauge, computed at sample time from the
 *                bitsets and the produced counts of that moment (it can fall when a late
 *                object fills a hole). Settled (the recount, produced final): every sequence
 *                missing from [0, produced[p]), so a missing tail is a finding too.
 *   foreign      each foreign line.
 *   corrupted    each object that is zero bytes long or holds at least one unparsable line
 *                (counted once per object; its valid lines are still judged as events).
 *   mutations    (judge: each change seen; recount: against the ledger) a judged object
 *                whose ETag or size changed, or that vanished. Counted once per object and
 *                change: changed twice counts 2, vanished counts 1.
 *   pastProduced distinct committed events (p, seq) with seq >= produced[p]. A gauge like
 *                gaps: the final value, once production has stopped, is exact.
 *
 * Memory: one bit a committed sequence (a growable bitset per partition); sequences absurdly
 * far beyond what the bitset holds (>= 2^26 and beyond twice its size) go to a small
 * per-partition overflow set, so a fabricated seq of 10^15 cannot blow the heap.
 */
import { GrowableBitset } from './bitset.ts';
import { judgeSpan, type Generator } from './generator.ts';
import type { Counters } from '../lib/evidence.ts';
import { judgeBodyWasm } from './wasm-judge.ts';

const OVERFLOW_FLOOR = 1 << 26;
const NL = 10;

export interface ObjectJudgement {
  lines: number;
  events: number;
  duplicates: number;
  foreign: number;
  unparsable: number;
  corrupted: boolean;
  /** Why it is corrupted or foreign, first finding only (for people). */
  firstProblem?: string;
}

/**
 * One object's lines judged on their own, before its events are marked in a tally: what
 * judgeBody finds, and the events in line order as runs of consecutive sequences.
 */
export interface BodyJudgement {
  lines: number;
  events: number;
  foreign: number;
  unparsable: number;
  corrupted: boolean;
  firstProblem?: string;
  /** The event lines in order, as triples (p, first seq, count) of consecutive sequences. */
  runs: number[];
}

/**
 * The judge: CLINK_QUAL_JUDGE=js in the environment judges in JavaScript alone (for the
 * oracle bench's comparison); otherwise the compiled fast path does the canonical lines.
 */
export const JUDGE_IMPL: 'wasm' | 'js' = process.env.CLINK_QUAL_JUDGE === 'js' ? 'js' : 'wasm';

/**
 * Judges every line of one object's body against the seed (the definitions above), without
 * marking anything: a pure function of (gen, key, body), so it can run in a judge worker.
 * The canonical lines are judged by the compiled fast path (oracle/wasm-judge.ts), the rest
 * by judgeSpan; the result is judgeBodyJs's.
 */
export function judgeBody(gen: Generator, key: string, body: Buffer): BodyJudgement {
  if (body.length === 0 || JUDGE_IMPL === 'js') return judgeBodyJs(gen, key, body);
  return judgeBodyWasm(gen, key, body) ?? judgeBodyJs(gen, key, body);
}

/** judgeBody in JavaScript alone: the definition the compiled fast path is held to. */
export function judgeBodyJs(gen: Generator, key: string, body: Buffer): BodyJudgement {
  const j: BodyJudgement = { lines: 0, events: 0, foreign: 0, unparsable: 0, corrupted: false, runs: [] };
  if (body.length === 0) {
    j.corrupted = true;
    j.firstProblem = `${key}: zero bytes`;
    return j;
  }
  const runs = j.runs;
  // The run being built: partition, first seq, next seq expected.
  let rp = -1;
  let rFrom = 0;
  let rNext = 0;
  let start = 0;
  const end = body.length;
  while (start < end) {
    let nl = body.indexOf(NL, start);
    if (nl < 0) nl = end;
    const v = judgeSpan(gen, body, start, nl);
    start = nl + 1;
    j.lines++;
    if (v.kind === 'event') {
      j.events++;
      if (v.p === rp && v.seq === rNext) rNext++;
      else {
        if (rp >= 0) runs.push(rp, rFrom, rNext - rFrom);
        rp = v.p;
        rFrom = v.seq;
        rNext = v.seq + 1;
      }
    } else if (v.kind === 'foreign') {
      j.foreign++;
      j.firstProblem ??= `${key} line ${j.lines}: foreign (${v.reason})`;
    } else {
      j.unparsable++;
      j.firstProblem ??= `${key} line ${j.lines}: not a JSON object`;
    }
  }
  if (rp >= 0) runs.push(rp, rFrom, rNext - rFrom);
  if (j.unparsable > 0) j.corrupted = true;
  return j;
}

export interface PartitionFigures {
  partition: number;
  produced: number;
  distinct: number;
  highestSeq: number;
  gaps: number;
  pastProduced: number;
}

export class EventTally {
  readonly gen: Generator;
  readonly #bits: GrowableBitset[];
  readonly #overflow: Set<number>[];
  objects = 0;
  lines = 0;
  bytes = 0;
  duplicates = 0;
  foreign = 0;
  corrupted = 0;
  /** Kept by the caller (the judge or the recount); the tally never sees history. */
  mutations = 0;

  constructor(gen: Generator) {
    this.gen = gen;
    this.#bits = Array.from({ length: gen.partitions }, () => new GrowableBitset());
    this.#overflow = Array.from({ length: gen.partitions }, () => new Set<number>());
  }

  /** Judges one object's bytes and adds them to the tally. */
  addObject(key: string, body: Buffer): ObjectJudgement {
    return this.addJudged(key, body.length, judgeBody(this.gen, key, body));
  }

  /**
   * Adds an object judged by judgeBody (here or in a judge worker, oracle/judge-pool.ts) to
   * the tally: marks its events in line order, counting duplicates, and returns the
   * object's judgement with them.
   */
  addJudged(key: string, size: number, b: BodyJudgement): ObjectJudgement {
    this.objects++;
    this.bytes += size;
    const j: ObjectJudgement = { lines: b.lines, events: b.events, duplicates: 0, foreign: b.foreign, unparsable: b.unparsable, corrupted: b.corrupted };
    if (b.firstProblem !== undefined) j.firstProblem = b.firstProblem;
    const runs = b.runs;
    for (let r = 0; r + 2 < runs.length; r += 3) {
      const p = runs[r]!;
      const from = runs[r + 1]!;
      const to = from + runs[r + 2]!;
      // A run below OVERFLOW_FLOOR lies in the bitset whole (#mark's rule): marked a word at a time.
      if (to <= OVERFLOW_FLOOR) j.duplicates += this.#bits[p]!.testAndSetRange(from, to);
      else for (let seq = from; seq < to; seq++) if (!this.#mark(p, seq)) j.duplicates++;
    }
    if (j.corrupted) this.corrupted++;
    this.lines += j.lines;
    this.duplicates += j.duplicates;
    this.foreign += j.foreign;
    return j;
  }

  /** Records event (p, seq) as committed; false when it already was (a duplicate). */
  #mark(p: number, seq: number): boolean {
    const bits = this.#bits[p]!;
    if (seq < bits.capacity || seq < OVERFLOW_FLOOR || seq < bits.capacity * 2) return bits.testAndSet(seq);
    const o = this.#overflow[p]!;
    if (o.has(seq)) return false;
    o.add(seq);
    return true;
  }

  /**
   * Per-partition figures against the produced counts (undefined: production unknown, nothing is past it).
   * settled: the bucket is final (the recount), so a missing tail, sequences from the highest
   * committed one up to produced, counts as gaps too; live (the sampler) it is only lag.
   */
  figures(produced?: readonly number[], opts: { settled?: boolean } = {}): PartitionFigures[] {
    const out: PartitionFigures[] = [];
    for (let p = 0; p < this.gen.partitions; p++) {
      const bits = this.#bits[p]!;
      const over = this.#overflow[p]!;
      const n = produced?.[p] ?? Number.POSITIVE_INFINITY;
      let highestSeq = bits.highest;
      for (const s of over) if (s > highestSeq) highestSeq = s;
      const within = bits.countRange(0, Math.min(n, bits.capacity));
      let overWithin = 0;
      for (const s of over) if (s < n) overWithin++;
      const distinct = bits.count + over.size;
      const pastProduced = distinct - within - overWithin;
      // h: the highest committed seq below produced.
      let h = -1;
      if (bits.highest < n) h = bits.highest;
      else h = highestBelow(bits, Math.min(n, bits.capacity));
      for (const s of over) if (s < n && s > h) h = s;
      const committedUpToH = bits.countRange(0, h + 1) + [...over].filter((s) => s <= h).length;
      // Settled, with produced known: every sequence below produced that is not committed (holes and tail).
      const gaps = opts.settled && Number.isFinite(n) ? n - within - overWithin : h + 1 - committedUpToH;
      out.push({ partition: p, produced: Number.isFinite(n) ? n : -1, distinct, highestSeq, gaps, pastProduced });
    }
    return out;
  }

  counters(produced?: readonly number[], opts: { settled?: boolean } = {}): Counters {
    const f = this.figures(produced, opts);
    return {
      duplicates: this.duplicates,
      gaps: f.reduce((a, x) => a + x.gaps, 0),
      foreign: this.foreign,
      corrupted: this.corrupted,
      mutations: this.mutations,
      pastProduced: f.reduce((a, x) => a + x.pastProduced, 0),
    };
  }

  /** Distinct events committed, all partitions. */
  get distinct(): number {
    let n = 0;
    for (let p = 0; p < this.gen.partitions; p++) n += this.#bits[p]!.count + this.#overflow[p]!.size;
    return n;
  }

  /** Bytes the bitsets hold. */
  get bitsetBytes(): number {
    return this.#bits.reduce((a, b) => a + b.bytes, 0);
  }
}

/** Highest set index below n, or -1. */
function highestBelow(bits: GrowableBitset, n: number): number {
  for (let i = n - 1; i >= 0; i--) {
    if ((i & 31) === 31 && i >= 31 && bits.countRange(i - 31, i + 1) === 0) {
      i -= 31;
      continue;
    }
    if (bits.has(i)) return i;
  }
  return -1;
}

