/**
 * Bad campaign values are refused with exit 254 and a FILE:LINE: FIELD message through
 * the real CLI (`clink-qual campaign plan FILE`), never a crash (255), a stack overflow,
 * an exhausted heap, or a plan that records what cannot happen (an infinite hold).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from '../../../lib/sleep.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');
const quick = readFileSync(path.join(repo, 'campaigns', 'quick.yaml'), 'utf8');
const dir = mkdtempSync(path.join(os.tmpdir(), 'clink-qual-limits-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** quick.yaml with one line replaced (must be present exactly once). */
function variant(name: string, from: string, to: string): string {
  t.equal(quick.split(from).length, 2, `quick.yaml has ${from} once`);
  const f = path.join(dir, `${name}.yaml`);
  writeFileSync(f, quick.replace(from, to));
  return f;
}

function plan(file: string) {
  const r = spawnSync(process.execPath, [cli, 'campaign', 'plan', file], { cwd: repo, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stderr: r.stderr };
}

const lineOf = (file: string, needle: string) => readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(needle)) + 1;

t.test('a YAML alias bomb: 254 at the alias, not 255', async (t) => {
  const f = path.join(dir, 'bomb.yaml');
  const lines = [quick.trimEnd(), 'x-a: &a [x, x, x, x, x, x, x, x, x, x]'];
  let prev = 'a';
  for (const n of 'bcdefghi') {
    lines.push(`x-${n}: &${n} [${Array(10).fill(`*${prev}`).join(', ')}]`);
    prev = n;
  }
  writeFileSync(f, lines.join('\n') + '\n');
  const r = plan(f);
  t.equal(r.code, 254, r.stderr);
  t.match(r.stderr, new RegExp(`bomb\\.yaml:\\d+: x-[a-i](\\[\\d+\\])?: YAML aliases`));
});

t.test('count: 150000 and a huge count: 254 on the field, no stack overflow, no heap exhaustion', async (t) => {
  for (const [name, count] of [['count-150000', '150000'], ['count-huge', '100000000000000']] as const) {
    const f = variant(name, '{ kind: coordinator-kill, count: 1 }', `{ kind: coordinator-kill, count: ${count} }`);
    const r = plan(f);
    t.equal(r.code, 254, `${name}: ${r.stderr.slice(0, 300)}`);
    t.match(r.stderr, `${name}.yaml:${lineOf(f, '{ kind: coordinator-kill')}: faults[1].count: must be <= 10000`);
  }
  // Many entries each under the limit: refused by the total, before a plan is built.
  const f = path.join(dir, 'many.yaml');
  writeFileSync(
    f,
    quick
      .replace('soakS: 260', 'soakS: 604800')
      .replace('schedule: { startAfterS: 10, spacingS: 15 }', 'schedule: { startAfterS: 10, spacingS: 1, jitterS: 0 }')
      .replace('  - { kind: coordinator-kill, count: 1 }\n', '  - { kind: coordinator-kill, count: 10000 }\n'.repeat(3)),
  );
  const r = plan(f);
  t.equal(r.code, 254, r.stderr.slice(0, 300));
  t.match(r.stderr, /many\.yaml:\d+: faults: \d+ fault slots; at most 10000/);
});

t.test('.inf, .nan and over-long durations are refused on the field', async (t) => {
  const cases: [string, string, string, RegExp][] = [
    ['inf-duration', '{ kind: store-outage, count: 1, durationS: 8 }', '{ kind: store-outage, count: 1, durationS: .inf }', /faults\[3\]\.durationS: must be a finite number/],
    ['nan-duration', '{ kind: store-outage, count: 1, durationS: 8 }', '{ kind: store-outage, count: 1, durationS: .nan }', /faults\[3\]\.durationS: must be a finite number/],
    ['long-duration', '{ kind: store-outage, count: 1, durationS: 8 }', '{ kind: store-outage, count: 1, durationS: 2200000 }', /faults\[3\]\.durationS: must be <= 86400/],
    ['inf-soak', 'soakS: 260', 'soakS: .inf', /workload\.soakS: must be a finite number/],
    ['long-soak', 'soakS: 260', 'soakS: 99999999', /workload\.soakS: must be <= 604800/],
    ['huge-rate', 'rate: 300 ', 'rate: 1e12 ', /workload\.rate: must be <= 1000000/],
    ['huge-spacing', 'spacingS: 15 }', 'spacingS: 9999999999 }', /schedule\.spacingS: must be <= 604800/],
    ['inf-recovery', 'recoveryS: 60,', 'recoveryS: .inf,', /deadlines\.recoveryS: must be a finite number/],
  ];
  for (const [name, from, to, want] of cases) {
    const f = variant(name, from, to);
    const r = plan(f);
    t.equal(r.code, 254, `${name}: ${r.stderr.slice(0, 300)}`);
    t.match(r.stderr, new RegExp(`${name}\\.yaml:\\d+: ${want.source}`), name);
  }
});

t.test('sleep() holds a delay longer than 2^31-1 ms instead of firing at once', async (t) => {
  const ac = new AbortController();
  let done = false;
  const p = sleep(2 ** 31 + 60_000, ac.signal).then(() => (done = true));
  await new Promise((r) => setTimeout(r, 200));
  t.equal(done, false, 'still sleeping after 200 ms');
  ac.abort();
  await p;
  t.equal(done, true, 'the abort ends it');
});
