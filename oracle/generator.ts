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

  /** The seed's four state words and the key width: what the compiled fast path (oracle/wasm-judge.ts) is given. */
  get fastPathParams(): { state: [number, number, number, number]; keyWidth: number } {
    return { state: [this.#s0, this.#s1, this.#s2, this.#s3], keyWidth: this.#keyWidth };
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
    return serialize(this.event(p, seq));
  }

  // The sfc32 stream of the event being drawn (one generator, one event at a time).
  #a = 0;
  #b = 0;
  #c = 0;
  #d = 0;
  #n = 0;

  #seedStream(p: number, seq: number): void {
    const lo = seq >>> 0;
    const hi = Math.floor(seq / 4294967296) >>> 0;
    this.#a = fmix(this.#s0 ^ Math.imul(p + 1, 0x9e3779b1));
    this.#b = fmix(this.#s1 ^ lo);
    this.#c = fmix(this.#s2 ^ Math.imul(hi + 0x632be5ab, 0x85ebca77) ^ this.#a);
    this.#d = fmix(this.#s3 ^ Math.imul(lo, 0xc2b2ae3d) ^ this.#b);
    this.#n = 1;
    for (let i = 0; i < 4; i++) this.#next();
  }

  #next(): number {
    const a = this.#a | 0;
    const b = this.#b | 0;
    const c = this.#c | 0;
    const d = this.#d | 0;
    const t = (((a + b) | 0) + d) | 0;
    this.#d = (d + this.#n++) | 0;
    this.#a = b ^ (b >>> 9);
    this.#b = (c + (c << 3)) | 0;
    this.#c = (((c << 21) | (c >>> 11)) + t) | 0;
    return t >>> 0;
  }

  #draw(p: number, seq: number): { key: string; payload: string } {
    this.#seedStream(p, seq);
    const key = this.keyName(this.#next() % this.keys);
    const len = PAYLOAD_MIN + (this.#next() % (PAYLOAD_MAX - PAYLOAD_MIN + 1));
    const chars = this.#chars;
    const parts = new Array<string>(len);
    let r = 0;
    for (let i = 0; i < len; i++) {
      if (i % 5 === 0) r = this.#next();
      parts[i] = chars[r & 63]!;
      r >>>= 6;
    }
    return { key, payload: parts.join('') };
  }

  /**
   * True when bytes [from, to) of `buf`, which start just after `{"id":"<p>-<seq>"`, are
   * exactly the rest of event (p, seq)'s canonical line; `pFrom..pTo` and `sFrom..sTo` are
   * where the id's digits of p and seq lie in buf. Compares in place and allocates nothing:
   * the oracle calls this for every committed line.
   */
  matchesRest(buf: Uint8Array, from: number, to: number, p: number, seq: number, pFrom: number, pTo: number, sFrom: number, sTo: number): boolean {
    // Layout after the id: ,"p":<p>,"seq":<seq>,"key":"k<w digits>","payload":"<len chars>"}
    const pLen = pTo - pFrom;
    const sLen = sTo - sFrom;
    const w = this.#keyWidth;
    // The exact length is known once the payload length is drawn; check what can be checked first.
    let i = from;
    if (to > buf.length || to - i < 5 + pLen + 7 + sLen + 8 + 1 + w + 13 + PAYLOAD_MIN + 2) return false;
    // ,"p":
    if (buf[i] !== 44 || buf[i + 1] !== 34 || buf[i + 2] !== 112 || buf[i + 3] !== 34 || buf[i + 4] !== 58) return false;
    i += 5;
    for (let k = pFrom; k < pTo; k++) if (buf[i++] !== buf[k]) return false;
    // ,"seq":
    if (buf[i] !== 44 || buf[i + 1] !== 34 || buf[i + 2] !== 115 || buf[i + 3] !== 101 || buf[i + 4] !== 113 || buf[i + 5] !== 34 || buf[i + 6] !== 58) return false;
    i += 7;
    for (let k = sFrom; k < sTo; k++) if (buf[i++] !== buf[k]) return false;
    // ,"key":"k
    if (buf[i] !== 44 || buf[i + 1] !== 34 || buf[i + 2] !== 107 || buf[i + 3] !== 101 || buf[i + 4] !== 121 || buf[i + 5] !== 34 || buf[i + 6] !== 58 || buf[i + 7] !== 34 || buf[i + 8] !== 107) return false;
    i += 9;
    // The sfc32 stream of #seedStream/#next, inlined in locals: this is the oracle's hot path.
    const lo = seq >>> 0;
    const hi = Math.floor(seq / 4294967296) >>> 0;
    let a = fmix(this.#s0 ^ Math.imul(p + 1, 0x9e3779b1)) | 0;
    let b = fmix(this.#s1 ^ lo) | 0;
    let c = fmix(this.#s2 ^ Math.imul(hi + 0x632be5ab, 0x85ebca77) ^ a) | 0;
    let d = fmix(this.#s3 ^ Math.imul(lo, 0xc2b2ae3d) ^ b) | 0;
    let n = 1;
    let t = 0;
    // 4 draws discarded, then the key's and the length's.
    for (let k = 0; k < 4; k++) {
      t = (((a + b) | 0) + d) | 0;
      d = (d + n++) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (((c << 21) | (c >>> 11)) + t) | 0;
    }
    t = (((a + b) | 0) + d) | 0;
    d = (d + n++) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (((c << 21) | (c >>> 11)) + t) | 0;
    const keyIndex = (t >>> 0) % this.keys;
    t = (((a + b) | 0) + d) | 0;
    d = (d + n++) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (((c << 21) | (c >>> 11)) + t) | 0;
    const len = PAYLOAD_MIN + ((t >>> 0) % (PAYLOAD_MAX - PAYLOAD_MIN + 1));
    // Now the whole length is known: the key's digits, '","payload":"', the payload, '"}'.
    if (to - i !== w + 13 + len + 2) return false;
    // Zero-padded key digits, compared arithmetically from the right.
    let rest = keyIndex;
    for (let k = i + w - 1; k >= i; k--) {
      const dig = rest % 10;
      rest = (rest - dig) / 10;
      if (buf[k] !== 48 + dig) return false;
    }
    if (rest !== 0) return false;
    i += w;
    // ","payload":"
    if (buf[i] !== 34 || buf[i + 1] !== 44 || buf[i + 2] !== 34 || buf[i + 3] !== 112 || buf[i + 4] !== 97 || buf[i + 5] !== 121 || buf[i + 6] !== 108 || buf[i + 7] !== 111 || buf[i + 8] !== 97 || buf[i + 9] !== 100 || buf[i + 10] !== 34 || buf[i + 11] !== 58 || buf[i + 12] !== 34) return false;
    i += 13;
    // The payload, five 6-bit characters a draw: decode five bytes into 30 bits and compare
    // with the draw (a byte outside the alphabet sets bit 8 of `bad`).
    const dec = DECODE;
    const stop = i + len;
    const full = i + len - (len % 5);
    let bad = 0;
    while (i < full) {
      t = (((a + b) | 0) + d) | 0;
      d = (d + n++) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (((c << 21) | (c >>> 11)) + t) | 0;
      const x0 = dec[buf[i]!]!;
      const x1 = dec[buf[i + 1]!]!;
      const x2 = dec[buf[i + 2]!]!;
      const x3 = dec[buf[i + 3]!]!;
      const x4 = dec[buf[i + 4]!]!;
      bad |= x0 | x1 | x2 | x3 | x4;
      if ((x0 | (x1 << 6) | (x2 << 12) | (x3 << 18) | (x4 << 24)) !== (t & 0x3fffffff)) return false;
      i += 5;
    }
    if (i < stop) {
      t = (((a + b) | 0) + d) | 0;
      let r = t >>> 0;
      for (; i < stop; i++) {
        if (buf[i] !== CODES[r & 63]) return false;
        r >>>= 6;
      }
    }
    return (bad & 256) === 0 && buf[i] === 34 && buf[i + 1] === 125; // '"}'
  }
}

const enc = new TextEncoder();
const B_PREFIX = enc.encode('{"id":"');

function bytesAt(buf: Uint8Array, at: number, what: Uint8Array): boolean {
  if (at + what.length > buf.length) return false;
  for (let k = 0; k < what.length; k++) if (buf[at + k] !== what[k]) return false;
  return true;
}

const CODES = Uint8Array.from(ALPHABET, (ch) => ch.charCodeAt(0));
/** Byte → its 6-bit index in ALPHABET; 256 for a byte outside it. */
const DECODE = new Int32Array(256).fill(256);
for (let k = 0; k < 64; k++) DECODE[CODES[k]!] = k;

/** The canonical serialisation of an event: fixed field order, no spaces, no newline. */
export function serialize(e: GeneratedEvent): string {
  return `{"id":"${e.id}","p":${e.p},"seq":${e.seq},"key":"${e.key}","payload":"${e.payload}"}`;
}

/** What a line is, judged against the seed. */
export type LineVerdict =
  /** Exactly the canonical line of (p, seq), 0 <= p < partitions. */
  | { kind: 'event'; p: number; seq: number }
  /** A JSON object, but not a generated event of this seed and range (see oracle/tally.ts for the definitions). */
  | { kind: 'foreign'; reason: string }
  /** Not a JSON object at all. */
  | { kind: 'unparsable' };

/**
 * Judges bytes [start, end) of buf — one line, without its newline — against the generator.
 * Fast path (judgeSpanFast): read p and seq from the canonical prefix and compare the whole
 * line with the regenerated one in place, allocating nothing. Only a line that fails that
 * takes the exact path (judgeLineExact): decoded, JSON-parsed, compared with gen.line(p, seq)
 * as strings, which tells a foreign record from garbage. The two agree on every line
 * (test/unit/oracle/generator.fast-exact.test.ts); the fast path is only ever a shortcut to 'event'.
 */
export function judgeSpan(gen: Generator, buf: Uint8Array, start: number, end: number): LineVerdict {
  return judgeSpanFast(gen, buf, start, end) ?? judgeLineExact(gen, Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString('utf8'));
}

/** The fast path alone: the event when bytes [start, end) are exactly its canonical line, else undefined (undecided). */
export function judgeSpanFast(gen: Generator, buf: Uint8Array, start: number, end: number): { kind: 'event'; p: number; seq: number } | undefined {
  if (end > buf.length || !bytesAt(buf, start, B_PREFIX)) return undefined;
  const pFrom = start + B_PREFIX.length;
  const pTo = scanDigits(buf, pFrom, end);
  if (pTo === pFrom || buf[pTo] !== 45 /* - */) return undefined;
  const sFrom = pTo + 1;
  const sTo = scanDigits(buf, sFrom, end);
  if (sTo === sFrom || buf[sTo] !== 34 /* " */) return undefined;
  const p = digitsValue(buf, pFrom, pTo);
  const seq = digitsValue(buf, sFrom, sTo);
  if (p >= 0 && seq >= 0 && p < gen.partitions && gen.matchesRest(buf, sTo + 1, end, p, seq, pFrom, pTo, sFrom, sTo)) return { kind: 'event', p, seq };
  return undefined;
}

/** Judges one line (no newline) against the generator. */
export function judgeLine(gen: Generator, line: string): LineVerdict {
  const b = Buffer.from(line, 'utf8');
  return judgeSpan(gen, b, 0, b.length);
}

/**
 * The exact path, on a decoded line: JSON.parse it, and it is an event only when it is,
 * character for character, gen.line(p, seq) for the p and seq it holds.
 */
export function judgeLineExact(gen: Generator, line: string): LineVerdict {
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
  if (line === gen.line(p, seq)) return { kind: 'event', p, seq };
  return { kind: 'foreign', reason: `line for ${p}-${seq} does not match the seed` };
}

/** End of the run of ASCII digits starting at from (at most 16 of them, to stay exact). */
function scanDigits(buf: Uint8Array, from: number, end: number): number {
  let i = from;
  while (i < end && i - from <= 16) {
    const c = buf[i]!;
    if (c < 48 || c > 57) break;
    i++;
  }
  return i;
}

/** Value of the digits [from, to); -1 for a leading zero (not canonical) or an unsafe integer. */
function digitsValue(buf: Uint8Array, from: number, to: number): number {
  if (to - from > 16 || (to - from > 1 && buf[from] === 48)) return -1;
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + (buf[i]! - 48);
  return Number.isSafeInteger(n) ? n : -1;
}
