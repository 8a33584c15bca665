/**
 * The generator: a pure function of (seed, partition, sequence).
 *
 * Nothing about an event is recorded; everything is recomputed from the seed, so anyone
 * holding the seed can judge any line of any engine's output. An event is
 *
 *   { id: "<p>-<seq>", p, seq, key, payload }
 *
 * serialised as one canonical JSON line, fields in exactly that order, no spaces:
 *
 *   {"id":"2-41","p":2,"seq":41,"key":"k03117","payload":"Zq0…"}
 *
 * - key: one of `keys` distinct keys, `k` + the key index zero-padded to at least 5 digits
 *   (k00000 … k49999 for 50,000 keys), chosen by the event's hash.
 * - payload: 48–96 characters from a 64-character JSON-safe alphabet [A-Za-z0-9_-], drawn
 *   from an sfc32 stream seeded by a hash of (seed, p, seq). No per-event seedrandom: the
 *   oracle regenerates every committed line, millions of them, so this has to be cheap.
 *
 * The output contract: each committed object is JSON Lines, every line exactly the
 * canonical serialisation below. `judgeLine` says whether a line is one.
 */

/** The generator's parameters; a seed string is hashed once into 128 bits of state. */
export interface GeneratorSpec {
  seed: string;
  partitions: number;
  keys: number;
}

export interface GeneratedEvent {
  id: string;
  p: number;
  seq: number;
  key: string;
  payload: string;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
export const PAYLOAD_MIN = 48;
export const PAYLOAD_MAX = 96;

/** xmur3: a string → 32-bit hash stream (by bryc, public domain). */
function xmur3(str: string): () => number {
  let h = 1779033703 ^ str.length;
  for (let i = 0; i < str.length; i++) {
    h = Math.imul(h ^ str.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  return () => {
    h = Math.imul(h ^ (h >>> 16), 2246822507);
    h = Math.imul(h ^ (h >>> 13), 3266489909);
    return (h ^= h >>> 16) >>> 0;
  };
}

/** A 32-bit finaliser (murmur3 fmix32). */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export class Generator {
  readonly seed: string;
  readonly partitions: number;
  readonly keys: number;
  readonly #keyWidth: number;
  readonly #s0: number;
  readonly #s1: number;
  readonly #s2: number;
  readonly #s3: number;
  readonly #keyNames: string[];
  readonly #chars: string[];

  constructor(spec: GeneratorSpec) {
    if (!Number.isInteger(spec.partitions) || spec.partitions < 1) throw new RangeError(`partitions must be a positive integer (got ${spec.partitions})`);
    if (!Number.isInteger(spec.keys) || spec.keys < 1) throw new RangeError(`keys must be a positive integer (got ${spec.keys})`);
    this.seed = String(spec.seed);
    this.partitions = spec.partitions;
    this.keys = spec.keys;
    this.#keyWidth = Math.max(5, String(spec.keys - 1).length);
    const h = xmur3(this.seed);
    this.#s0 = h();
    this.#s1 = h();
    this.#s2 = h();
    this.#s3 = h();
    // Key names are few (tens of thousands) and reused millions of times: build them lazily.
    this.#keyNames = new Array<string>(spec.keys);
    this.#chars = ALPHABET.split('');
  }

  keyName(index: number): string {
    let k = this.#keyNames[index];
    if (k === undefined) {
      k = 'k' + String(index).padStart(this.#keyWidth, '0');
      this.#keyNames[index] = k;
    }
    return k;
  }

  /** The event (p, seq). p and seq must be non-negative safe integers; p may lie outside [0, partitions) (for judging). */
  event(p: number, seq: number): GeneratedEvent {
    const { key, payload } = this.#draw(p, seq);
    return { id: `${p}-${seq}`, p, seq, key, payload };
  }

  /** The canonical JSON line of event (p, seq), without the newline. */
  line(p: number, seq: number): string {
    const { key, payload } = this.#draw(p, seq);
    return `{"id":"${p}-${seq}","p":${p},"seq":${seq},"key":"${key}","payload":"${payload}"}`;
  }

  #draw(p: number, seq: number): { key: string; payload: string } {
    const lo = seq >>> 0;
    const hi = Math.floor(seq / 4294967296) >>> 0;
    // Seed an sfc32 stream from (seed, p, seq).
    let a = fmix(this.#s0 ^ Math.imul(p + 1, 0x9e3779b1));
    let b = fmix(this.#s1 ^ lo);
    let c = fmix(this.#s2 ^ Math.imul(hi + 0x632be5ab, 0x85ebca77) ^ a);
    let d = fmix(this.#s3 ^ Math.imul(lo, 0xc2b2ae3d) ^ b);
    let counter = 1;
    const next = (): number => {
      a >>>= 0;
      b >>>= 0;
      c >>>= 0;
      d >>>= 0;
      const t = (((a + b) | 0) + d) | 0;
      d = (d + counter++) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      c = (c + t) | 0;
      return t >>> 0;
    };
    for (let i = 0; i < 4; i++) next();
    const key = this.keyName(next() % this.keys);
    const len = PAYLOAD_MIN + (next() % (PAYLOAD_MAX - PAYLOAD_MIN + 1));
    const chars = this.#chars;
    let payload = '';
    let r = 0;
    for (let i = 0; i < len; i++) {
      if (i % 5 === 0) r = next();
      payload += chars[r & 63];
      r >>>= 6;
    }
    return { key, payload };
  }
}

/** What a line is, judged against the seed. */
export type LineVerdict =
  /** Exactly the canonical line of (p, seq), 0 <= p < partitions. */
  | { kind: 'event'; p: number; seq: number }
  /** A JSON object, but not a generated event of this seed and range (see oracle/tally.ts for the definitions). */
  | { kind: 'foreign'; reason: string }
  /** Not a JSON object at all. */
  | { kind: 'unparsable' };

const PREFIX = '{"id":"';

/**
 * Judges one line (no newline) against the generator. Fast path: read p and seq from the
 * canonical prefix and compare the whole line with the regenerated one; only a line that
 * fails that is JSON-parsed to tell a foreign record from garbage.
 */
export function judgeLine(gen: Generator, line: string): LineVerdict {
  if (line.startsWith(PREFIX)) {
    const dash = line.indexOf('-', PREFIX.length);
    const quote = dash > 0 ? line.indexOf('"', dash) : -1;
    if (quote > 0 && dash - PREFIX.length <= 6 && quote - dash - 1 <= 16) {
      const p = parseDigits(line, PREFIX.length, dash);
      const seq = parseDigits(line, dash + 1, quote);
      if (p >= 0 && seq >= 0 && p < gen.partitions && line === gen.line(p, seq)) return { kind: 'event', p, seq };
    }
  }
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return { kind: 'unparsable' };
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { kind: 'unparsable' };
  const o = v as Record<string, unknown>;
  const { p, seq } = o;
  if (typeof p !== 'number' || !Number.isSafeInteger(p) || p < 0) return { kind: 'foreign', reason: 'no valid p' };
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return { kind: 'foreign', reason: 'no valid seq' };
  if (p >= gen.partitions) return { kind: 'foreign', reason: `p=${p} outside [0, ${gen.partitions})` };
  return { kind: 'foreign', reason: `line for ${p}-${seq} does not match the seed` };
}

/** Parses a run of ASCII digits [from, to) without leading zeros; -1 if it is not one. */
function parseDigits(s: string, from: number, to: number): number {
  if (to <= from || to - from > 16) return -1;
  if (to - from > 1 && s.charCodeAt(from) === 48) return -1;
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return Number.isSafeInteger(n) ? n : -1;
}
