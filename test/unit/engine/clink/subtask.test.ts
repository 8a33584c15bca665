/**
 * A subtask's protocol with an in-process fake source and fake sink (pure logic, no
 * Kafka, no store): restore before reading, barrier snapshots, commits only on complete,
 * handles of an abandoned barrier carried into the next snapshot, the off-by-one mutant,
 * the timing line after each commit.
 */
import t from 'tap';
import { Subtask } from '../../../../engine/clink/subtask.ts';
import type { SourceLike } from '../../../../engine/clink/subtask.ts';
import type { WorkerMessage, TaskSpec } from '../../../../engine/clink/protocol.ts';
import type { Sink, SinkContext, UploadHandle } from '../../../../engine/clink/sink/sink-api.ts';
import type { SourceRecord } from '../../../../engine/clink/source.ts';
import type { ClinkMutant } from '../../../../engine/clink/mutants/index.ts';
import { parseTimingLine } from '../../../../engine/clink/subtask-timing.ts';

class FakeSource implements SourceLike {
  resolvedStart = -1;
  records: SourceRecord[] = [];
  #i = 0;
  #wake: (() => void) | null = null;
  readonly start0: number | null;
  constructor(start0: number | null) {
    this.start0 = start0;
  }
  async start(): Promise<void> {
    this.resolvedStart = this.start0 ?? 0;
    this.#i = 0;
  }
  push(n: number): void {
    const base = this.resolvedStart + this.records.length;
    for (let k = 0; k < n; k++) this.records.push({ offset: base + k, value: Buffer.from(JSON.stringify({ p: 0, seq: base + k })) });
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

interface SinkEvent {
  op: string;
  checkpointId?: number;
  keys?: string[];
  lines?: number;
}

function fakeSink(events: SinkEvent[]): Sink {
  let buf: string[] = [];
  const h = (checkpointId: number, epoch: number, records: number): UploadHandle => ({
    bucket: 'b',
    key: `k/${epoch}/${checkpointId}`,
    uploadId: `u${checkpointId}`,
    parts: [],
    bytes: 0,
    records,
    token: '',
    expectedEtag: '',
    subtask: 0,
    checkpointId,
    epoch,
  });
  return {
    async open() {
      events.push({ op: 'open' });
    },
    write(line) {
      buf.push(line);
    },
    async prepare(c, e) {
      events.push({ op: 'prepare', checkpointId: c, lines: buf.length });
      const out = buf.length ? [h(c, e, buf.length)] : [];
      buf = [];
      return out;
    },
    async commit(c, _e, handles) {
      events.push({ op: 'commit', checkpointId: c, keys: handles.map((x) => x.key) });
    },
    async recover(handles) {
      events.push({ op: 'recover', keys: handles.map((x) => x.key) });
    },
    async close() {
      events.push({ op: 'close' });
    },
  };
}

function setup(spec: Partial<TaskSpec> = {}, mutant?: ClinkMutant, logs: string[] = []) {
  const sent: WorkerMessage[] = [];
  const events: SinkEvent[] = [];
  let source!: FakeSource;
  const st = new Subtask({
    epoch: 3,
    spec: { subtask: 0, partition: 0, startOffset: 100, restoredHandles: [], ...spec },
    sinkFactory: () => fakeSink(events),
    makeSinkContext: () => ({}) as SinkContext,
    kafka: { bootstrap: [], topic: 'x' },
    mutant,
    checkpointIntervalMs: 1000,
    send: (m) => sent.push(m),
    log: (l) => logs.push(l),
    makeSource: (o) => (source = new FakeSource(o.startOffset)),
  });
  return { st, sent, events, source: () => source };
}

const until = async (cond: () => boolean, ms = 2000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timeout');
    await new Promise((r) => setTimeout(r, 5));
  }
};

t.test('recover before reading, snapshot offsets, commit only on complete', async (t) => {
  const restored = [{ key: 'old' } as UploadHandle];
  const { st, sent, events, source } = setup({ restoredHandles: restored });
  st.start();
  await until(() => sent.some((m) => m.type === 'ready'));
  t.same(events.slice(0, 2).map((e) => e.op), ['open', 'recover'], 'recover runs before reading');
  t.same(events[1]!.keys, ['old']);
  t.equal(source().resolvedStart, 100, 'reads from the restored offset exactly');
  source().push(10);
  await new Promise((r) => setTimeout(r, 20));
  st.barrier(7);
  await until(() => sent.some((m) => m.type === 'snapshot'));
  const snap = sent.find((m) => m.type === 'snapshot') as Extract<WorkerMessage, { type: 'snapshot' }>;
  t.equal(snap.offset, 110, 'next offset after the 10 records');
  t.equal(snap.handles.length, 1);
  t.notOk(events.some((e) => e.op === 'commit'), 'nothing committed before complete');
  st.complete(7, snap.handles);
  await until(() => events.some((e) => e.op === 'commit'));
  t.same(events.find((e) => e.op === 'commit')!.keys, ['k/3/7']);
  await st.cancel();
});

t.test('an abandoned barrier leaves its handles pending: the next snapshot carries them', async (t) => {
  const { st, sent, source } = setup();
  st.start();
  await until(() => sent.some((m) => m.type === 'ready'));
  source().push(5);
  await new Promise((r) => setTimeout(r, 20));
  st.barrier(1); // the coordinator will abandon this one
  await until(() => sent.filter((m) => m.type === 'snapshot').length === 1);
  source().push(5);
  await new Promise((r) => setTimeout(r, 20));
  st.barrier(2);
  await until(() => sent.filter((m) => m.type === 'snapshot').length === 2);
  const snap2 = sent.filter((m) => m.type === 'snapshot')[1] as Extract<WorkerMessage, { type: 'snapshot' }>;
  t.equal(snap2.offset, 110);
  t.same(snap2.handles.map((h) => h.key), ['k/3/1', 'k/3/2'], 'both handles: the offsets cover both');
  st.complete(2, snap2.handles);
  await new Promise((r) => setTimeout(r, 20));
  st.barrier(3);
  await until(() => sent.filter((m) => m.type === 'snapshot').length === 3);
  const snap3 = sent.filter((m) => m.type === 'snapshot')[2] as Extract<WorkerMessage, { type: 'snapshot' }>;
  t.same(snap3.handles, [], 'committed handles are no longer pending');
  await st.cancel();
});

t.test('a cancelled subtask sends nothing more and closes its sink', async (t) => {
  const { st, sent, events, source } = setup();
  st.start();
  await until(() => sent.some((m) => m.type === 'ready'));
  source().push(3);
  await st.cancel();
  const n = sent.length;
  st.barrier(9);
  await new Promise((r) => setTimeout(r, 30));
  t.equal(sent.length, n, 'no snapshot after cancel');
  t.ok(events.some((e) => e.op === 'close'), 'sink closed (buffer dropped)');
});

t.test('MUTANT offsets-off-by-one starts one record early on restore (not on a fresh start)', async (t) => {
  const a = setup({ startOffset: 100 }, 'offsets-off-by-one');
  a.st.start();
  await until(() => a.sent.some((m) => m.type === 'ready'));
  t.equal(a.source().resolvedStart, 99);
  await a.st.cancel();
  const b = setup({ startOffset: null }, 'offsets-off-by-one');
  b.st.start();
  await until(() => b.sent.some((m) => m.type === 'ready'));
  t.equal(b.source().resolvedStart, 0);
  await b.st.cancel();
});

t.test("after each commit, one timing line: records, idle, prepare and commit since reading started, and the source's fetch counters", async (t) => {
  const logs: string[] = [];
  const { st, sent, events, source } = setup({}, undefined, logs);
  st.start();
  await until(() => sent.some((m) => m.type === 'ready'));
  const src = source() as FakeSource & { fetchTiming?: () => { fetches: number; fetchMs: number; queueFullMs: number } };
  src.fetchTiming = () => ({ fetches: 7, fetchMs: 123.4, queueFullMs: 5 });
  source().push(10);
  await new Promise((r) => setTimeout(r, 80)); // idle: nothing buffered after the 10 records
  st.barrier(1);
  await until(() => sent.some((m) => m.type === 'snapshot'));
  t.notOk(logs.some((l) => parseTimingLine(l)), 'no timing line before a commit');
  const snap = sent.find((m) => m.type === 'snapshot') as Extract<WorkerMessage, { type: 'snapshot' }>;
  st.complete(1, snap.handles);
  await until(() => events.some((e) => e.op === 'commit') && logs.some((l) => parseTimingLine(l)));
  const lines = logs.filter((l) => parseTimingLine(l));
  t.equal(lines.length, 1);
  const f = parseTimingLine(lines[0]!)!;
  t.match(lines[0], /^clink worker: subtask 0 epoch 3 timing: readingMs=\d+ records=10 idleMs=\d+ prepares=1 prepareMs=\d+ commits=1 commitMs=\d+ fetches=7 fetchMs=123 queueFullMs=5$/);
  t.ok(f.idleMs >= 50, `idle while nothing was buffered (${f.idleMs} ms)`);
  t.ok(f.readingMs >= f.idleMs + f.prepareMs + f.commitMs - 2, `the loop's parts fit in the time reading (${f.readingMs} ms)`);
  await st.cancel();
});
