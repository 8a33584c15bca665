/**
 * rig/install-progress.ts: each part's start, notes and end with its time; one heartbeat line
 * naming the running parts after 10 s of silence, never more than one each 10 s however many
 * parts run; the summary's wall time and per-part times. Driven by a hand-moved clock.
 */
import t from 'tap';
import { InstallProgress, type ProgressClock } from '../../../rig/install-progress.ts';

/** A clock moved by hand: `advance(ms)` calls the tick at each of its due times on the way, as setInterval would. */
function handClock(): ProgressClock & { advance(ms: number): void; ticking(): boolean } {
  let now = 1_000_000;
  let tick: (() => void) | undefined;
  let period = 0;
  let due = 0;
  return {
    now: () => now,
    every(ms, fn) {
      tick = fn;
      period = ms;
      due = now + ms;
      return () => {
        tick = undefined;
      };
    },
    advance(ms) {
      const end = now + ms;
      while (tick && due <= end) {
        now = due;
        due += period;
        tick();
      }
      now = end;
    },
    ticking: () => tick !== undefined,
  };
}

/** A promise and the function that resolves it. */
function gate<T>(): { promise: Promise<T>; open(v: T): void } {
  let open!: (v: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}

t.test('a part says when it starts, passes its notes on, and ends with its time', async (t) => {
  const clock = handClock();
  const lines: string[] = [];
  const p = new InstallProgress((l) => lines.push(l), clock);
  const done = gate<string>();
  const run = p.part(
    'kafka',
    async (note) => {
      note('fetching Apache Kafka from Maven Central');
      return done.promise;
    },
    (r) => `installed ${r}`,
  );
  clock.advance(4_200);
  done.open('4.1.1');
  t.equal(await run, '4.1.1', 'the part returns what its run returned');
  t.same(lines, ['kafka: start', 'kafka: fetching Apache Kafka from Maven Central', 'kafka: installed 4.1.1 (4.2 s)']);
  t.notOk(clock.ticking(), 'the heartbeat stops when no part runs');
});

t.test('one heartbeat line each 10 s of silence names every running part with its elapsed seconds', async (t) => {
  const clock = handClock();
  const lines: string[] = [];
  const p = new InstallProgress((l) => lines.push(l), clock);
  const kafka = gate<void>();
  const minio = gate<void>();
  let minioNote!: (l: string) => void;
  const a = p.part('kafka', () => kafka.promise);
  clock.advance(3_000);
  const b = p.part('minio', (note) => {
    minioNote = note;
    return minio.promise;
  });
  clock.advance(9_000); // 9 s since minio's start line: nothing yet
  t.same(lines, ['kafka: start', 'minio: start']);
  clock.advance(1_000); // 10 s of silence: one line for both parts
  t.same(lines.slice(2), ['… still running: kafka 13 s, minio 10 s']);
  clock.advance(9_999);
  t.equal(lines.length, 3, 'not a second line within 10 s of the first');
  clock.advance(1);
  t.equal(lines[3], '… still running: kafka 23 s, minio 20 s');
  kafka.open();
  await a;
  t.equal(lines[4], 'kafka: done (23.0 s)');
  clock.advance(5_000);
  minioNote('linking');
  clock.advance(9_000);
  t.equal(lines.length, 6, 'a note counts as a sign of life: no heartbeat 9 s after it');
  clock.advance(1_000);
  t.equal(lines[6], '… still running: minio 35 s', 'a finished part is no longer named');
  clock.advance(60_000);
  t.equal(lines.length, 13, 'a minute of silence: six lines, one each 10 s, not a flood');
  minio.open();
  await b;
  t.equal(lines.at(-1), 'minio: done (95.0 s)');
  t.notOk(clock.ticking());
});

t.test('a failed part ends "failed" with its time, its error passes through, and the summary says so', async (t) => {
  const clock = handClock();
  const lines: string[] = [];
  const p = new InstallProgress((l) => lines.push(l), clock);
  const slow = gate<string>();
  const ok = p.part('apt packages', () => slow.promise);
  const bad = p.part('minio', async () => {
    clock.advance(2_500);
    throw new Error('go install exited 1');
  });
  await t.rejects(bad, /go install exited 1/);
  t.equal(lines.at(-1), 'minio: failed (2.5 s)');
  clock.advance(1_000);
  t.equal(p.summary(), 'failed after 3.5 s: apt packages 3.5 s (still running), minio 2.5 s (failed)');
  slow.open('x');
  await ok;
});

t.test('the summary: wall time since the first start, each part in the order it started', async (t) => {
  const clock = handClock();
  const p = new InstallProgress(() => {}, clock);
  const k = gate<void>();
  const first = p.part('kafka', () => k.promise);
  clock.advance(1_000);
  const m = gate<void>();
  const second = p.part('minio', () => m.promise);
  clock.advance(2_000);
  k.open();
  await first;
  clock.advance(40_000);
  m.open();
  await second;
  t.equal(p.summary(), 'done in 43.0 s: kafka 3.0 s, minio 42.0 s', 'side by side: the total is less than the sum of the parts');
});
