/**
 * A judge worker (oracle/judge-pool.ts): judges whole object bodies against the seed with
 * oracle/tally.ts judgeBody, off the thread that fetches them. It marks nothing; the tally
 * stays with its owner, who marks the runs it gets back.
 *
 * In:  { id, key, buf: ArrayBuffer (transferred), offset, length }
 * Out: { id, judgement } or { id, error }
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Generator, type GeneratorSpec } from './generator.ts';
import { judgeBody } from './tally.ts';

export interface JudgeRequest {
  id: number;
  key: string;
  buf: ArrayBuffer;
  offset: number;
  length: number;
}

const gen = new Generator(workerData as GeneratorSpec);
const port = parentPort!;
port.on('message', (m: JudgeRequest) => {
  try {
    port.postMessage({ id: m.id, judgement: judgeBody(gen, m.key, Buffer.from(m.buf, m.offset, m.length)) });
  } catch (err) {
    port.postMessage({ id: m.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
});
