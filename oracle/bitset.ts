/**
 * A growable bitset over sequence numbers: one bit an event, so the oracle's memory is
 * bounded by the number of events (1/8 byte each), never by their size.
 */
export class GrowableBitset {
  #words: Uint32Array;
  #count = 0;
  /** Highest index set, -1 when empty. */
  #highest = -1;

  constructor(initialBits = 1 << 16) {
    this.#words = new Uint32Array(Math.max(1, Math.ceil(initialBits / 32)));
  }

  /** Bits the current storage covers. */
  get capacity(): number {
    return this.#words.length * 32;
  }

  /** How many bits are set. */
  get count(): number {
    return this.#count;
  }

  get highest(): number {
    return this.#highest;
  }

  /** Bytes held. */
  get bytes(): number {
    return this.#words.byteLength;
  }

  has(i: number): boolean {
    const w = i >>> 5;
    if (w >= this.#words.length) return false;
    return (this.#words[w]! & (1 << (i & 31))) !== 0;
  }

  /** Sets bit i; returns false when it was already set. Grows (doubling) as needed. */
  testAndSet(i: number): boolean {
    const w = Math.floor(i / 32);
    if (w >= this.#words.length) this.#grow(w + 1);
    const m = 1 << (i & 31);
    const old = this.#words[w]!;
    if ((old & m) !== 0) return false;
    this.#words[w] = old | m;
    this.#count++;
    if (i > this.#highest) this.#highest = i;
    return true;
  }

  /**
   * Sets bits [from, to) a word at a time; returns how many of them were already set (what
   * testAndSet would have refused, one by one). Grows (doubling) as needed.
   */
  testAndSetRange(from: number, to: number): number {
    if (to <= from) return 0;
    const last = Math.floor((to - 1) / 32);
    if (last >= this.#words.length) this.#grow(last + 1);
    const words = this.#words;
    let already = 0;
    let i = from;
    while (i < to) {
      const w = Math.floor(i / 32);
      const lo = i % 32;
      const hi = Math.min(32, lo + (to - i));
      const mask = hi === 32 ? ~0 << lo : ((1 << hi) - 1) & (~0 << lo);
      const old = words[w]!;
      already += popcount(old & mask);
      words[w] = old | mask;
      i += hi - lo;
    }
    this.#count += to - from - already;
    if (to - 1 > this.#highest) this.#highest = to - 1;
    return already;
  }

  /** Number of set bits in [from, to). */
  countRange(from: number, to: number): number {
    to = Math.min(to, this.capacity);
    if (to <= from) return 0;
    let n = 0;
    let i = from;
    while (i < to && (i & 31) !== 0) {
      if (this.has(i)) n++;
      i++;
    }
    const words = this.#words;
    while (i + 32 <= to) {
      n += popcount(words[i >>> 5]!);
      i += 32;
    }
    while (i < to) {
      if (this.has(i)) n++;
      i++;
    }
    return n;
  }

  #grow(minWords: number): void {
    let n = this.#words.length;
    while (n < minWords) n *= 2;
    const next = new Uint32Array(n);
    next.set(this.#words);
    this.#words = next;
  }
}

export function popcount(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}
