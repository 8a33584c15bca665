/**
 * "Never retried, never skipped": a SinkIntegrityError from commit or from recover ends the
 * subtask and is reported to the coordinator as an integrity error (which stops the job).
 * In-process fakes of the source and the sink (pure logic); test/rig/engine-tamper.test.ts
 * shows the whole reaction on the rig.
 */
import t from 'tap';
import { Subtask, isIntegrityError, type SourceLike } from '../../../../engine/clink/subtask.ts';
import type { WorkerMessage } from '../../../../engine/clink/protocol.ts';
import type { Sink, SinkContext, UploadHandle } from '../../../../engine/clink/sink/sink-api.ts';
import { SinkIntegrityError } from '../../../../engine/clink/sink/s3-2pc-sink.ts';
import type { SourceRecord } from '../../../../engine/clink/source.ts';

class Source implements SourceLike {
  resolvedStart = 0;
  records: SourceRecord[] = [];
  #i = 0;
  #wake: (() => void) | null = null;
  async start(): Promise<void> {}
  push(n: number): void {
    for (let k = 0; k < n; k++) this.records.push({ offset: this.records.length, value: Buffer.from(`{"seq":${this.records.length}}`) });
    this.#wake?.();
  }
  next(): SourceRecord | null {
    return this.#i < this.records.length ? this.records[this.#i++]! : null;
  }
  whenReadable(): Promise<void> {
    return this.#i < this.records.length ? Promise.resolve() : new Promise((r) => (this.#wake = r));
  }
  async close(): Promise<void> {
    this.#wake?.();
  }
}

const handle = (c: number): UploadHandle => ({ bucket: 'b', key: `k/${c}`, uploadId: `u${c}`, parts: [], bytes: 1, records: 1, token: 't', expectedEtag: 'e', subtask: 0, checkpointId: c, epoch: 1 });

function setup(opts: { failCommit?: boolean; failRecover?: boolean }) {
  const sent: WorkerMessage[] = [];
  const calls: string[] = [];
  let buf = 0;
  let source!: Source;
  const sink: Sink = {
    async open() {},
    write() {
      buf++;
    },
    async prepare(c) {
      calls.push(`prepare ${c}`);
      const out = buf ? [handle(c)] : [];
      buf = 0;
      return out;
    },
    async commit(c, _e, hs) {
      calls.push(`commit ${c}`);
      if (opts.failCommit) throw new SinkIntegrityError(`object at ${hs[0]?.key} is not ours`, hs[0]!);
    },
    async recover(hs) {
      calls.push('recover');
      if (opts.failRecover) throw new SinkIntegrityError('object at k/0 is not ours', hs[0] ?? handle(0));
    },
    async close() {},
  };
  const st = new Subtask({
    epoch: 1,
    spec: { subtask: 0, partition: 0, startOffset: 0, restoredHandles: opts.failRecover ? [handle(0)] : [] },
    sinkFactory: () => sink,
    makeSinkContext: () => ({}) as SinkContext,
    kafka: { bootstrap: [], topic: 'x' },
    checkpointIntervalMs: 1000,
    send: (m) => sent.push(m),
    log: () => undefined,
    makeSource: () => (source = new Source()),
  });
  return { st, sent, calls, source: () => source };
}

const until = async (cond: () => boolean, ms = 3000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timeout');
    await new Promise((r) => setTimeout(r, 5));
  }
};
const errors = (sent: WorkerMessage[]) => sent.filter((m): m is Extract<WorkerMessage, { type: 'error' }> => m.type === 'error');

t.test('isIntegrityError', async (t) => {
  t.ok(isIntegrityError(new SinkIntegrityError('x', handle(1))));
  t.notOk(isIntegrityError(new Error('x')));
  t.notOk(isIntegrityError(null));
});

t.test('an integrity error at commit ends the subtask and is reported as one; nothing after it', async (t) => {
  const { st, sent, calls, source } = setup({ failCommit: true });
  st.start();
  await until(() => sent.some((m) => m.type === 'ready'));
  source().push(3);
  await new Promise((r) => setTimeout(r, 20));
  st.barrier(1);
  await until(() => sent.some((m) => m.type === 'snapshot'));
  const snap = sent.find((m) => m.type === 'snapshot') as Extract<WorkerMessage, { type: 'snapshot' }>;
  st.complete(1, snap.handles);
  await until(() => errors(sent).length > 0);
  const e = errors(sent)[0]!;
  t.equal(e.integrity, true, 'reported as an integrity error');
  t.equal(e.fatal, true);
  t.match(e.message, /k\/1 is not ours/);
  // The subtask is over: a later barrier gets no snapshot, and the handle is not committed again.
  source().push(2);
  st.barrier(2);
  await new Promise((r) => setTimeout(r, 100));
  t.equal(sent.filter((m) => m.type === 'snapshot').length, 1, 'no snapshot after the integrity error');
  t.same(calls.filter((c) => c.startsWith('commit')), ['commit 1'], 'never retried');
  t.equal(errors(sent).length, 1, 'reported once');
  await st.cancel();
});

t.test('an integrity error at recover is not retried: reported once, the subtask never reads', async (t) => {
  const { st, sent, calls } = setup({ failRecover: true });
  st.start();
  await until(() => errors(sent).length > 0);
  await new Promise((r) => setTimeout(r, 700)); // longer than the first retry delay (250 ms)
  t.same(calls, ['recover'], 'recover ran once');
  t.equal(errors(sent).length, 1);
  t.equal(errors(sent)[0]!.integrity, true);
  t.notOk(sent.some((m) => m.type === 'ready'), 'never ready');
  await st.cancel();
});
