/**
 * The benchmark's line producer in its own JVM process (bench/engine-sustained.ts
 * --producer-jvm): bench/jvm-producer/BenchProducer.java, compiled against the rig's own pinned
 * Kafka client jars (the cached kafka-<version>/libs that `rig install` fetched from Maven
 * Central) and run with them.
 *
 * Why: the Node producers (@platformatic/kafka, in the event loop or in worker threads) cost
 * about 3 µs of CPU an event (114 % of a core at 360,000 events/s, produce only, at 8ea8f2f);
 * on a 2-core rig the load generator then takes the CPU the side under test needs, and the
 * climb ends producer-bound. Kafka's own Java client batches and encodes in compiled code.
 *
 * The contract is ThreadedProducer's (bench/producer-thread.ts): the calling side numbers the
 * events (round-robin over the partitions it owns, `seq` advanced before produce() returns,
 * so the caller logs the send times before the acknowledgement); the JVM builds the same lines,
 * {"p","seq","pad"} with the same padding, sends them idempotently with acks=all, and answers
 * each send once Kafka acknowledged every event of it, or with the first error.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { cacheDir } from '../lib/paths.ts';
import { PINS } from '../rig/install.ts';
import { numberSend, type SendRange } from './producer-pool.ts';

const SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'jvm-producer', 'BenchProducer.java');
const REPLY = 'clink-bench-reply ';

/** The pinned Kafka's jars, as `rig install` caches them. */
export function kafkaLibs(): string {
  return path.join(cacheDir(), `kafka-${PINS.kafka}`, 'libs');
}

/**
 * Compiles BenchProducer.java once per source and Kafka version (a cache directory named by
 * their hash); returns the directory holding the class. Throws, with javac's output, when it
 * cannot.
 */
export function compiledProducer(libs = kafkaLibs()): string {
  if (!existsSync(libs)) throw new Error(`the JVM producer needs Kafka's jars at ${libs}: run ./clink-qual rig install (or rig up) first`);
  const hash = createHash('sha256').update(readFileSync(SOURCE)).update(PINS.kafka).digest('hex').slice(0, 12);
  const dir = path.join(cacheDir(), `bench-producer-${hash}`);
  if (existsSync(path.join(dir, 'BenchProducer.class'))) return dir;
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const r = spawnSync('javac', ['-nowarn', '-d', tmp, '-cp', path.join(libs, '*'), SOURCE], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`javac ${SOURCE} failed: ${r.error?.message ?? `exit ${r.status}`}\n${r.stderr ?? ''}`);
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return dir;
}

/** The request line for a send. */
export function requestLine(id: number, ranges: readonly SendRange[]): string {
  return `${id} ${ranges.map(([p, first, n]) => `${p}:${first}:${n}`).join(' ')}\n`;
}

/** An answer line, or null for any other line (a logger's). */
export function parseReply(line: string): { id: number; error?: string } | null {
  if (!line.startsWith(REPLY)) return null;
  const m = /^(\d+) (ok|ready|error)(?: (.*))?$/.exec(line.slice(REPLY.length));
  if (!m) return null;
  return m[2] === 'error' ? { id: Number(m[1]), error: m[3] ?? 'unknown error' } : { id: Number(m[1]) };
}

/** CPU seconds (user + system, all threads) of a live process, from /proc/<pid>/stat; null when it is gone. */
export function processCpuS(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 (utime, stime) are at 11 and 12 after the state field; clock ticks of 1/100 s on Linux.
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}

export class JvmProducer {
  readonly topic: string;
  readonly partitions: number;
  readonly seq: number[];
  readonly owned: readonly number[];
  readonly #child: ChildProcess;
  readonly #waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  readonly #stderr: string[] = [];
  readonly #ready: Promise<void>;
  #nextId = 0;
  #failed: Error | null = null;

  /**
   * opts.nice: the JVM's nice value (-20..19; below 0 needs root), given at its start with
   * nice(1), so that every thread of it has it (Linux keeps a nice value per thread; a
   * renice after the start would reach its first thread only).
   */
  constructor(bootstrap: string[], topic: string, partitions: number, padBytes = 60, owned?: readonly number[], opts: { retries?: number; nice?: number; libs?: string } = {}) {
    this.topic = topic;
    this.partitions = partitions;
    this.seq = new Array(partitions).fill(0);
    this.owned = owned ?? Array.from({ length: partitions }, (_, p) => p);
    if (!this.owned.length || this.owned.some((p) => !Number.isInteger(p) || p < 0 || p >= partitions)) throw new Error(`JvmProducer: owned partitions ${JSON.stringify(owned)} not within 0..${partitions - 1}`);
    if (opts.nice !== undefined && !(Number.isInteger(opts.nice) && opts.nice >= -20 && opts.nice <= 19)) throw new Error(`JvmProducer: nice ${opts.nice} is not an integer in -20..19`);
    const libs = opts.libs ?? kafkaLibs();
    const classes = compiledProducer(libs);
    const java = ['java', '-XX:+UseSerialGC', '-Xms512m', '-Xmx512m', '-cp', `${classes}:${path.join(libs, '*')}`, 'BenchProducer', bootstrap.join(','), topic, String(padBytes), String(opts.retries ?? 20)];
    const argv = opts.nice === undefined ? java : ['nice', '-n', String(opts.nice), ...java];
    this.#child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    let ready!: () => void;
    let notReady!: (err: Error) => void;
    this.#ready = new Promise<void>((res, rej) => {
      ready = res;
      notReady = rej;
    });
    this.#ready.catch(() => undefined);
    createInterface({ input: this.#child.stdout! }).on('line', (line) => {
      const r = parseReply(line);
      if (!r) return;
      if (r.id === 0) return ready();
      const w = this.#waiting.get(r.id);
      if (!w) return;
      this.#waiting.delete(r.id);
      if (r.error !== undefined) w.reject(new Error(`JVM producer: ${r.error}`));
      else w.resolve();
    });
    createInterface({ input: this.#child.stderr! }).on('line', (line) => {
      this.#stderr.push(line);
      if (this.#stderr.length > 20) this.#stderr.shift();
    });
    const fail = (err: Error) => {
      if (!this.#failed) this.#failed = err;
      notReady(this.#failed);
      for (const w of this.#waiting.values()) w.reject(this.#failed);
      this.#waiting.clear();
    };
    this.#child.on('error', (err) => fail(new Error(`JVM producer could not start: ${err.message}`)));
    this.#child.on('exit', (code, signal) => fail(new Error(`JVM producer exited (${signal ?? code})${this.#stderr.length ? `: ${this.#stderr.slice(-5).join(' | ')}` : ''}`)));
    this.#child.stdin!.on('error', () => undefined); // a write after the exit: the exit handler reports it
  }

  /** The JVM's pid (for its CPU). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Resolves once the JVM's producer exists (its first line). */
  ready(): Promise<void> {
    return this.#ready;
  }

  get produced(): number {
    return this.seq.reduce((a, b) => a + b, 0);
  }

  /** Numbers `count` events now (round-robin over its partitions) and sends them in one request to the JVM. */
  produce(count: number, batch = count): Promise<void> {
    if (batch < count) return Promise.reject(new Error('JvmProducer sends one batch per call'));
    if (this.#failed) return Promise.reject(this.#failed);
    const ranges = numberSend(this.seq, this.owned, count);
    const id = ++this.#nextId;
    return new Promise<void>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#child.stdin!.write(requestLine(id, ranges));
    });
  }

  /** Flushes and closes the JVM's producer (5 s at most), then ends the process. */
  async close(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      const exited = new Promise<void>((r) => this.#child.once('exit', () => r()));
      if (!this.#failed) {
        const id = ++this.#nextId;
        const answered = new Promise<void>((resolve, reject) => {
          this.#waiting.set(id, { resolve, reject });
          this.#child.stdin!.write(`${id} close\n`);
        });
        await Promise.race([answered.catch(() => undefined), new Promise((r) => setTimeout(r, 15_000))]);
      }
      this.#child.stdin!.end();
      const t = setTimeout(() => this.#child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(t);
    }
  }
}
