/**
 * A judge worker (oracle/judge-pool.ts): judges whole object bodies against the seed with
 * oracle/tally.ts judgeBody, off the thread that fetches them. It marks nothing; the tally
 * stays with its owner, who marks the runs it gets back.
 *
 * In:  a batch, [{ id, key, buf: ArrayBuffer (transferred), offset, length }, ...]
 * Out: one reply for the batch, [{ id, judgement } or { id, error }, ...] in the same order
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Generator, type GeneratorSpec } from './generator.ts';
import { judgeBody, type BodyJudgement } from './tally.ts';

export interface JudgeRequest {
  id: number;
  key: string;
  buf: ArrayBuffer;
  offset: number;
  length: number;
}

/** Bodies sent to a worker in one message (oracle/judge-pool.ts). */
export type JudgeBatch = JudgeRequest[];

/** One body's judgement, or why it could not be judged. */
export interface JudgeReply {
  id: number;
  judgement?: BodyJudgement;
  error?: string;
}

const gen = new Generator(workerData as GeneratorSpec);
const port = parentPort!;
port.on('message', (batch: JudgeBatch) => {
  const replies: JudgeReply[] = [];
  for (const m of batch) {
    try {
      replies.push({ id: m.id, judgement: judgeBody(gen, m.key, Buffer.from(m.buf, m.offset, m.length)) });
    } catch (err) {
      replies.push({ id: m.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  }
  port.postMessage(replies);
});
