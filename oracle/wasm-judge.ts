/**
 * judgeBody's fast path, compiled (oracle/wasm/judge.as.ts, built into the committed
 * oracle/wasm/judge.wasm): it judges a body's canonical lines in WebAssembly and hands only
 * the lines it cannot call events to the JavaScript judge (oracle/generator.ts judgeSpan),
 * which tells a foreign record from garbage and words the finding. The result is the
 * BodyJudgement oracle/tally.ts judgeBodyJs computes, field for field
 * (test/unit/oracle/wasm-judge.test.ts compares them on mutated bodies).
 *
 * The body is copied into the module's memory a chunk at a time (CHUNK_BYTES, cut after a
 * newline), so the module's memory stays at a few MB whatever the object's size. Where the
 * two judges could disagree, the JavaScript one decides: a body with a line longer than a
 * chunk, or an undecided line the JavaScript judge calls an event, is judged again by
 * judgeBodyJs (undefined is returned, and the caller does that).
 */
import { readFileSync } from 'node:fs';
import { judgeSpan, type Generator } from './generator.ts';
import type { BodyJudgement } from './tally.ts';

/** Bytes of a body judged per call into the module. */
export const CHUNK_BYTES = 4 * 1024 * 1024;
/** Records (runs and undecided lines) per call; a call that fills them is resumed. */
export const RECORDS = 16 * 1024;

interface JudgeModule {
  memory: WebAssembly.Memory;
  init(a: number, b: number, c: number, d: number, keys: number, width: number, partitions: number): void;
  reserve(bytes: number, records: number): number;
  recordsAt(): number;
  begin(): void;
  linesSoFar(): number;
  stoppedAt(): number;
  judge(from: number, len: number): number;
  finish(): number;
}

let mod: JudgeModule | undefined;
let initFor: Generator | undefined;
let chunkAt = 0;
let reserved = { bytes: 0, records: 0 };

function judgeModule(gen: Generator, bytes: number, records: number): JudgeModule {
  if (!mod) {
    const wasm = readFileSync(new URL('./wasm/judge.wasm', import.meta.url));
    mod = new WebAssembly.Instance(new WebAssembly.Module(wasm), {}).exports as unknown as JudgeModule;
  }
  if (initFor !== gen) {
    const { state, keyWidth } = gen.fastPathParams;
    mod.init(state[0], state[1], state[2], state[3], gen.keys, keyWidth, gen.partitions);
    initFor = gen;
  }
  if (reserved.bytes !== bytes || reserved.records !== records) {
    chunkAt = mod.reserve(bytes, records);
    reserved = { bytes, records };
  }
  return mod;
}

/**
 * The BodyJudgement of a non-empty body, judged in the compiled module; undefined when the
 * JavaScript judge must judge it instead (see above). `chunkBytes` and `records` are for tests.
 */
export function judgeBodyWasm(gen: Generator, key: string, body: Buffer, chunkBytes = CHUNK_BYTES, records = RECORDS): BodyJudgement | undefined {
  if (gen.keys > 0xffffffff || gen.partitions > Number.MAX_SAFE_INTEGER) return undefined;
  const w = judgeModule(gen, chunkBytes, records);
  const j: BodyJudgement = { lines: 0, events: 0, foreign: 0, unparsable: 0, corrupted: false, runs: [] };
  const runs = j.runs;
  w.begin();
  // Consumes n records at recordsAt(); false when the JavaScript judge must take the body.
  const consume = (n: number, off: number): boolean => {
    if (n === 0) return true;
    const rec = new Float64Array(w.memory.buffer, w.recordsAt(), n * 3);
    for (let r = 0; r < n * 3; r += 3) {
      const first = rec[r]!;
      if (first >= 0) {
        runs.push(first, rec[r + 1]!, rec[r + 2]!);
        j.events += rec[r + 2]!;
        continue;
      }
      const line = -first; // 1-based
      const v = judgeSpan(gen, body, off + rec[r + 1]!, off + rec[r + 2]!);
      if (v.kind === 'event') return false;
      if (v.kind === 'foreign') {
        j.foreign++;
        j.firstProblem ??= `${key} line ${line}: foreign (${v.reason})`;
      } else {
        j.unparsable++;
        j.firstProblem ??= `${key} line ${line}: not a JSON object`;
      }
    }
    return true;
  };
  let off = 0;
  while (off < body.length) {
    let end = Math.min(body.length, off + chunkBytes);
    if (end < body.length) {
      const nl = body.lastIndexOf(10, end - 1);
      if (nl < off) return undefined; // a line longer than a chunk
      end = nl + 1;
    }
    const len = end - off;
    new Uint8Array(w.memory.buffer, chunkAt, len).set(body.subarray(off, end));
    let from = 0;
    while (from < len) {
      if (!consume(w.judge(from, len), off)) return undefined;
      from = w.stoppedAt();
    }
    off = end;
  }
  if (!consume(w.finish(), 0)) return undefined;
  j.lines = w.linesSoFar();
  if (j.unparsable > 0) j.corrupted = true;
  return j;
}
