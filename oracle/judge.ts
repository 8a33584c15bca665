/**
 * The incremental oracle. Each pass lists the output prefix (what a downstream consumer
 * would see), fetches every object it has not seen before exactly once, judges its lines
 * against the seed (oracle/tally.ts has the definitions), and keeps an ETag ledger
 * (key → ETag, size, lines, firstSeen). On every later pass, an object of the ledger whose
 * ETag or size changed, or that vanished, is a mutation, counted once per object and change.
 *
 * The ledger goes to ledger.jsonl (lib/evidence.ts LedgerEntry), one line when an object is
 * first judged; a later change is appended as another line for the same key with `change`
 * set ('changed' | 'vanished' | 'reappeared') and `at`. The first line for a key (no
 * `change`) is the version that was judged; the recount compares the settled bucket with it.
 *
 * A pass that meets a store error throws it (a QualError, canRetry for transient ones);
 * what it judged before the error is kept, so the next pass resumes where it stopped.
 */
import { appendFileSync } from 'node:fs';
import type { LedgerEntry } from '../lib/evidence.ts';
import { Generator, type GeneratorSpec } from './generator.ts';
import { ObjectStore, mapLimit, type StoreSettings, type ListedObject } from './store.ts';
import { EventTally, type ObjectJudgement } from './tally.ts';

export interface JudgeOptions extends GeneratorSpec {
  store: StoreSettings;
  bucket: string;
  prefix: string;
  /** Parallel GETs. Default 16. */
  concurrency?: number;
  /** Where to append the ledger; none when unset. */
  ledgerPath?: string;
  /** Called with each object's first problem (corrupted, foreign, duplicates), for logs. */
  onFinding?: (finding: string) => void;
}

interface LedgerState {
  etag: string;
  size: number;
  lines: number;
  firstSeen: string;
  /** Current state as last seen: 'present' or 'vanished', with the last ETag/size seen. */
  vanished: boolean;
  lastEtag: string;
  lastSize: number;
}

export interface PassResult {
  listed: number;
  fetched: number;
  mutations: number;
}

export class IncrementalJudge {
  readonly tally: EventTally;
  readonly store: ObjectStore;
  readonly #opts: JudgeOptions;
  readonly #ledger = new Map<string, LedgerState>();
  #passes = 0;

  constructor(opts: JudgeOptions) {
    this.#opts = opts;
    this.tally = new EventTally(new Generator(opts));
    this.store = new ObjectStore(opts.store, opts.bucket);
  }

  /** Objects in the ledger (judged at least once). */
  get objects(): number {
    return this.#ledger.size;
  }

  get passes(): number {
    return this.#passes;
  }

  /** One pass: list, check the ledger, fetch and judge what is new. */
  async pass(): Promise<PassResult> {
    const listed = await this.store.list(this.#opts.prefix);
    const now = new Date().toISOString();
    let mutations = 0;
    const present = new Set<string>();
    const fresh: ListedObject[] = [];
    for (const o of listed) {
      present.add(o.key);
      const l = this.#ledger.get(o.key);
      if (!l) {
        fresh.push(o);
        continue;
      }
      if (l.vanished) {
        l.vanished = false;
        if (o.etag !== l.lastEtag || o.size !== l.lastSize) {
          mutations++;
          this.#record({ key: o.key, etag: o.etag, size: o.size, lines: l.lines, firstSeen: l.firstSeen, change: 'reappeared', at: now });
        }
        l.lastEtag = o.etag;
        l.lastSize = o.size;
      } else if (o.etag !== l.lastEtag || o.size !== l.lastSize) {
        mutations++;
        this.#finding(`mutation: ${o.key} changed (ETag ${l.lastEtag} → ${o.etag}, size ${l.lastSize} → ${o.size})`);
        this.#record({ key: o.key, etag: o.etag, size: o.size, lines: l.lines, firstSeen: l.firstSeen, change: 'changed', at: now });
        l.lastEtag = o.etag;
        l.lastSize = o.size;
      }
    }
    for (const [key, l] of this.#ledger) {
      if (!l.vanished && !present.has(key)) {
        l.vanished = true;
        mutations++;
        this.#finding(`mutation: ${key} vanished`);
        this.#record({ key, etag: l.lastEtag, size: l.lastSize, lines: l.lines, firstSeen: l.firstSeen, change: 'vanished', at: now });
      }
    }
    this.tally.mutations += mutations;
    // Fetch each new object once. A failure ends the pass; what was judged stays judged.
    await mapLimit(fresh, this.#opts.concurrency ?? 16, async (o) => {
      const got = await this.store.get(o.key);
      const firstSeen = new Date().toISOString();
      if (!got) {
        // Listed, then gone before it could be read: a committed object vanished.
        this.tally.mutations++;
        mutations++;
        this.#finding(`mutation: ${o.key} vanished before it could be read`);
        // Ledgered as listed (so the recount, comparing with the ledger, sees the same mutation).
        this.#ledger.set(o.key, { etag: o.etag, size: o.size, lines: 0, firstSeen, vanished: true, lastEtag: o.etag, lastSize: o.size });
        this.#record({ key: o.key, etag: o.etag, size: o.size, lines: 0, firstSeen });
        this.#record({ key: o.key, etag: o.etag, size: o.size, lines: 0, firstSeen, change: 'vanished', at: firstSeen });
        return;
      }
      const j = this.tally.addObject(o.key, got.body);
      this.#report(o.key, j);
      this.#ledger.set(o.key, { etag: got.etag, size: got.size, lines: j.lines, firstSeen, vanished: false, lastEtag: got.etag, lastSize: got.size });
      this.#record({ key: o.key, etag: got.etag, size: got.size, lines: j.lines, firstSeen });
    });
    this.#passes++;
    return { listed: listed.length, fetched: fresh.length, mutations };
  }

  close(): void {
    this.store.destroy();
  }

  #report(key: string, j: ObjectJudgement): void {
    if (j.firstProblem) this.#finding(j.firstProblem);
    if (j.duplicates) this.#finding(`${key}: ${j.duplicates} duplicate line(s)`);
  }

  #finding(s: string): void {
    this.#opts.onFinding?.(s);
  }

  #record(e: LedgerEntry): void {
    if (this.#opts.ledgerPath) appendFileSync(this.#opts.ledgerPath, JSON.stringify(e) + '\n');
  }
}
