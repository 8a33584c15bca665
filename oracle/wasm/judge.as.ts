/**
 * The oracle's fast path, compiled: AssemblyScript (a TypeScript dialect), built by
 * `npm run build:wasm` into oracle/wasm/judge.wasm, which is committed and checked against
 * a fresh build by test/unit/oracle/wasm-judge.build.test.ts. Not type-checked by tsc
 * (tsconfig.json excludes it): `load<u8>` and `@inline` are AssemblyScript's.
 *
 * It does exactly what oracle/generator.ts judgeSpanFast and Generator.matchesRest do, over
 * a whole chunk of an object's body: for each line, either the line is exactly the
 * canonical line of (p, seq), 0 <= p < partitions, or it is left undecided for the exact
 * path in JavaScript (which tells a foreign record from garbage). The events are returned as
 * runs (p, first seq, count) of consecutive sequences, in line order, as judgeBody builds
 * them; an undecided line never breaks a run, since the exact path never finds an event the
 * fast path missed (test/unit/oracle/generator.fast-exact.test.ts).
 *
 * Memory: two static tables, byte → 6-bit index in the alphabet (64: outside it) and the
 * alphabet; from CHUNK_AT (past all static data) the chunk being judged; after it the records, three f64 each:
 * (p, first seq, count) for a run, (-1 - line index, start, end) for an undecided line,
 * start and end relative to the chunk.
 */
const DEC: usize = memory.data(256);
const CODES: usize = memory.data(64);
// The chunk goes past the module's static data (the tables above, this file's constants).
const CHUNK_AT: usize = (__heap_base + 15) & ~(15 as usize);

let s0: u32 = 0;
let s1: u32 = 0;
let s2: u32 = 0;
let s3: u32 = 0;
let nkeys: u32 = 1;
let keyWidth: usize = 5;
let partitions: i64 = 1;

let chunkCap: usize = 0;
let outAt: usize = 0;
let outCap: i32 = 0;

// One body's state, kept across its chunks and across calls that stopped on a full output.
let lines: f64 = 0;
let runP: i64 = -1;
let runFrom: i64 = 0;
let runNext: i64 = 0;
/** Where in the chunk the last call stopped (the chunk's length when it finished it). */
let resumeAt: usize = 0;

// What match() found.
let gotP: i64 = 0;
let gotSeq: i64 = 0;
let gotEnd: usize = 0;

/** The generator: its four state words (Generator's #s0..#s3), keys, key width, partitions. */
export function init(a: u32, b: u32, c: u32, d: u32, keys: u32, width: i32, parts: f64): void {
  s0 = a;
  s1 = b;
  s2 = c;
  s3 = d;
  nkeys = keys;
  keyWidth = width as usize;
  partitions = parts as i64;
  // The alphabet (oracle/generator.ts ALPHABET): A-Z, a-z, 0-9, '_', '-'.
  for (let k: usize = 0; k < 256; k++) store<u8>(DEC + k, 64);
  for (let k: u32 = 0; k < 64; k++) {
    const ch: u32 = k < 26 ? 65 + k : k < 52 ? 97 + k - 26 : k < 62 ? 48 + k - 52 : k == 62 ? 95 : 45;
    store<u8>(DEC + ch, k as u8);
    store<u8>(CODES + k, ch as u8);
  }
}

/** Room for chunks of up to `bytes` and `records` records; returns the chunk's address. */
export function reserve(bytes: usize, records: i32): usize {
  chunkCap = bytes;
  outAt = (CHUNK_AT + bytes + 8) & ~(7 as usize);
  outCap = records;
  const need = (outAt + (records as usize) * 24 + 0xffff) >> 16;
  const have = memory.size() as usize;
  if (need > have) memory.grow((need - have) as i32);
  return CHUNK_AT;
}

export function recordsAt(): usize {
  return outAt;
}

/** A new body. */
export function begin(): void {
  lines = 0;
  runP = -1;
  runFrom = 0;
  runNext = 0;
}

/** Lines judged so far in this body (undecided ones included). */
export function linesSoFar(): f64 {
  return lines;
}

/** Where the last judge() call stopped in its chunk. */
export function stoppedAt(): usize {
  return resumeAt;
}

@inline function fmix(x: u32): u32 {
  let h = x;
  h ^= h >>> 16;
  h *= 0x85ebca6b;
  h ^= h >>> 13;
  h *= 0xc2b2ae35;
  h ^= h >>> 16;
  return h;
}

/** End of the run of ASCII digits from `from` (at most 17 of them scanned, as judgeSpanFast). */
@inline function scanDigits(from: usize, end: usize): usize {
  let i = from;
  while (i < end && i - from <= 16) {
    const ch = load<u8>(i);
    if (ch < 48 || ch > 57) break;
    i++;
  }
  return i;
}

/** The digits' value; -1 for a leading zero or an unsafe integer. */
@inline function digitsValue(from: usize, to: usize): i64 {
  if (to - from > 16 || (to - from > 1 && load<u8>(from) == 48)) return -1;
  let n: u64 = 0;
  for (let i = from; i < to; i++) n = n * 10 + ((load<u8>(i) - 48) as u64);
  if (n > 9007199254740991) return -1;
  return n as i64;
}

/**
 * True when the line starting at `start` (the chunk ends at `end`) is exactly the canonical
 * line of (p, seq), ending at `end` or at a newline: sets gotP, gotSeq, gotEnd.
 */
function match(start: usize, end: usize): bool {
  // {"id":"
  if (end - start < 7) return false;
  if (load<u32>(start) != 0x6469227b || load<u16>(start + 4) != 0x3a22 || load<u8>(start + 6) != 34) return false;
  const pFrom = start + 7;
  const pTo = scanDigits(pFrom, end);
  if (pTo == pFrom || pTo >= end || load<u8>(pTo) != 45) return false;
  const sFrom = pTo + 1;
  const sTo = scanDigits(sFrom, end);
  if (sTo == sFrom || sTo >= end || load<u8>(sTo) != 34) return false;
  const p = digitsValue(pFrom, pTo);
  const seq = digitsValue(sFrom, sTo);
  if (p < 0 || seq < 0 || p >= partitions) return false;
  const pLen = pTo - pFrom;
  const sLen = sTo - sFrom;
  const w = keyWidth;
  let i = sTo + 1;
  // The shortest line that can follow, before the payload's length is known.
  if (end - i < 5 + pLen + 7 + sLen + 9 + w + 13 + 48 + 2) return false;
  // ,"p":
  if (load<u32>(i) != 0x2270222c || load<u8>(i + 4) != 58) return false;
  i += 5;
  for (let k = pFrom; k < pTo; k++) {
    if (load<u8>(i) != load<u8>(k)) return false;
    i++;
  }
  // ,"seq":
  if (load<u32>(i) != 0x6573222c || load<u16>(i + 4) != 0x2271 || load<u8>(i + 6) != 58) return false;
  i += 7;
  for (let k = sFrom; k < sTo; k++) {
    if (load<u8>(i) != load<u8>(k)) return false;
    i++;
  }
  // ,"key":"k
  if (load<u64>(i) != 0x223a2279656b222c || load<u8>(i + 8) != 107) return false;
  i += 9;
  // The event's sfc32 stream (Generator #seedStream and #next).
  const lo = seq as u32;
  const hi = (seq >>> 32) as u32;
  let a: u32 = fmix(s0 ^ (((p as u32) + 1) * 0x9e3779b1));
  let b: u32 = fmix(s1 ^ lo);
  let c: u32 = fmix(s2 ^ ((hi + 0x632be5ab) * 0x85ebca77) ^ a);
  let d: u32 = fmix(s3 ^ (lo * 0xc2b2ae3d) ^ b);
  let n: u32 = 1;
  let t: u32 = 0;
  // Four draws discarded, then the key's.
  for (let k = 0; k < 5; k++) {
    t = a + b + d;
    d = d + n++;
    a = b ^ (b >>> 9);
    b = c + (c << 3);
    c = ((c << 21) | (c >>> 11)) + t;
  }
  const keyIndex = t % nkeys;
  // The payload's length: 48-96.
  t = a + b + d;
  d = d + n++;
  a = b ^ (b >>> 9);
  b = c + (c << 3);
  c = ((c << 21) | (c >>> 11)) + t;
  const len = (48 + (t % 49)) as usize;
  if (end - i < w + 13 + len + 2) return false;
  const lineEnd = i + w + 13 + len + 2;
  if (lineEnd < end && load<u8>(lineEnd) != 10) return false;
  // The key's zero-padded digits, from the right.
  let rest = keyIndex;
  for (let k = i + w; k > i; k--) {
    const dig = rest % 10;
    rest = rest / 10;
    if (load<u8>(k - 1) != 48 + dig) return false;
  }
  if (rest != 0) return false;
  i += w;
  // ","payload":"
  if (load<u64>(i) != 0x6f6c796170222c22 || load<u32>(i + 8) != 0x3a226461 || load<u8>(i + 12) != 34) return false;
  i += 13;
  // The payload, five 6-bit characters a draw.
  const stop = i + len;
  const full = stop - (len % 5);
  let bad: u32 = 0;
  while (i < full) {
    t = a + b + d;
    d = d + n++;
    a = b ^ (b >>> 9);
    b = c + (c << 3);
    c = ((c << 21) | (c >>> 11)) + t;
    const x0 = load<u8>(DEC + load<u8>(i)) as u32;
    const x1 = load<u8>(DEC + load<u8>(i + 1)) as u32;
    const x2 = load<u8>(DEC + load<u8>(i + 2)) as u32;
    const x3 = load<u8>(DEC + load<u8>(i + 3)) as u32;
    const x4 = load<u8>(DEC + load<u8>(i + 4)) as u32;
    bad |= x0 | x1 | x2 | x3 | x4;
    if ((x0 | (x1 << 6) | (x2 << 12) | (x3 << 18) | (x4 << 24)) != (t & 0x3fffffff)) return false;
    i += 5;
  }
  if (i < stop) {
    let r: u32 = a + b + d;
    for (; i < stop; i++) {
      if (load<u8>(i) != load<u8>(CODES + (r & 63))) return false;
      r >>>= 6;
    }
  }
  if ((bad & 64) != 0 || load<u8>(i) != 34 || load<u8>(i + 1) != 125) return false;
  gotP = p;
  gotSeq = seq;
  gotEnd = lineEnd;
  return true;
}

/**
 * Judges the chunk's lines from `from` (0 for a new chunk, stoppedAt() to go on) up to `len`,
 * which ends at a newline or at the body's end. Returns the records written; stops early,
 * at a line's start, when the records are full (stoppedAt() < len then). The run being built
 * goes on into the next call; finish() writes it.
 */
export function judge(from: usize, len: usize): i32 {
  let out = outAt;
  let recs = 0;
  const base = CHUNK_AT;
  const end = base + len;
  let start = base + from;
  while (start < end) {
    if (recs + 1 >= outCap) break;
    let next: usize;
    if (match(start, end)) {
      next = gotEnd + 1;
      if (gotP == runP && gotSeq == runNext) runNext++;
      else {
        if (runP >= 0) {
          store<f64>(out, runP as f64);
          store<f64>(out + 8, runFrom as f64);
          store<f64>(out + 16, (runNext - runFrom) as f64);
          out += 24;
          recs++;
        }
        runP = gotP;
        runFrom = gotSeq;
        runNext = gotSeq + 1;
      }
    } else {
      let nl = start;
      while (nl < end && load<u8>(nl) != 10) nl++;
      store<f64>(out, -1 - lines);
      store<f64>(out + 8, (start - base) as f64);
      store<f64>(out + 16, (nl - base) as f64);
      out += 24;
      recs++;
      next = nl + 1;
    }
    lines++;
    start = next;
  }
  resumeAt = (start < end ? start : end) - base;
  return recs;
}

/** The body's last run, if any, as one record at recordsAt(); returns 0 or 1. */
export function finish(): i32 {
  if (runP < 0) return 0;
  store<f64>(outAt, runP as f64);
  store<f64>(outAt + 8, runFrom as f64);
  store<f64>(outAt + 16, (runNext - runFrom) as f64);
  runP = -1;
  return 1;
}
