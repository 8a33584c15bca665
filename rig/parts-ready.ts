/**
 * The parts `rig install` has finished, as it finishes them, for a `rig up` that runs beside
 * it. On a fresh machine smoke installs and brings the rig up at once: the namespaces, sshd,
 * Kafka and the engine hosts' Node come up while MinIO still builds (minutes of Go), and the
 * store host waits for MinIO alone.
 *
 * install() calls done() for each part it finishes and end() once every lane has ended; a
 * part that install did not finish (it failed, or was not asked for) then fails its waiters
 * with install's error, or with one naming the part.
 */
import { QualError } from '../lib/errors.ts';
import type { Component } from './install.ts';

/** The Debian packages' part: it yields no component, only that sshd, iptables and the rest are there. */
export const APT_PART = 'apt packages';

interface Entry {
  promise: Promise<Component | undefined>;
  resolve: (c: Component | undefined) => void;
  reject: (e: Error) => void;
  settled: boolean;
}

export class PartsReady {
  readonly #entries = new Map<string, Entry>();
  #ended = false;
  #error: Error | undefined;

  #entry(name: string): Entry {
    let e = this.#entries.get(name);
    if (!e) {
      let resolve!: Entry['resolve'];
      let reject!: Entry['reject'];
      const promise = new Promise<Component | undefined>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      // A waiter that has gone (its rig up failed on another part) must not leave an unhandled rejection behind.
      promise.catch(() => {});
      e = { promise, resolve, reject, settled: false };
      this.#entries.set(name, e);
    }
    return e;
  }

  /** The part `name` once install has it: its component (undefined for APT_PART). */
  wait(name: string): Promise<Component | undefined> {
    const e = this.#entry(name);
    if (this.#ended && !e.settled) this.#fail(name, e);
    return e.promise;
  }

  /** The part `name`'s component once install has it; a part without one is an error. */
  async component(name: string): Promise<Component> {
    const c = await this.wait(name);
    if (!c) throw new QualError('INTERNAL', `install's part ${name} yields no component`);
    return c;
  }

  /** install finished the part `name`. */
  done(name: string, c?: Component): void {
    const e = this.#entry(name);
    if (e.settled) return;
    e.settled = true;
    e.resolve(c);
  }

  /** install has ended, with `error` when it failed: every part not done fails its waiters. */
  end(error?: Error): void {
    this.#ended = true;
    this.#error = error;
    for (const [name, e] of this.#entries) if (!e.settled) this.#fail(name, e);
  }

  #fail(name: string, e: Entry): void {
    e.settled = true;
    e.reject(this.#error ?? new QualError('PRECONDITION', `rig install ended without ${name}`));
  }
}
