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
