/**
 * Clink's mutant names are a closed union: the registry lists each name once, every name has
 * its mechanism and catching counters, and a process's config naming any other mutant is
 * refused when read (the compiler refuses a misspelt name in the engine's own comparisons).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { readConfig } from '../../../../engine/clink/config.ts';
import { CLINK_MUTANT_NAMES, CLINK_MUTANTS, isClinkMutant } from '../../../../engine/clink/mutants.ts';

t.test('the registry and the union name the same mutants, once each', async (t) => {
  t.same(CLINK_MUTANTS.map((m) => m.name), [...CLINK_MUTANT_NAMES]);
  t.equal(new Set(CLINK_MUTANT_NAMES).size, CLINK_MUTANT_NAMES.length);
  for (const m of CLINK_MUTANTS) t.ok(m.mechanism.length > 40 && m.caughtBy.length > 0, `${m.name}: mechanism and counters`);
  t.ok(isClinkMutant('no-fencing'));
  t.notOk(isClinkMutant('no-fencin'));
  t.notOk(isClinkMutant('none'), "'none' is not a mutant");
});

t.test("readConfig refuses a mutant outside the union, and accepts each inside it", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-mutant-cfg-'));
  const base = { host: 'worker-1', clinkDir: dir, coordinator: { address: '10.0.0.1', port: 1 }, kafka: { bootstrap: ['x:1'] }, topic: 't', partitions: 4, bucket: 'b', prefix: 'p/', checkpointIntervalMs: 1000, s3: { endpoint: 'http://x', region: 'r', credentialsFile: 'c' } };
  const file = path.join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ ...base, mutant: 'keys-reusd' }));
  t.throws(() => readConfig(file), /unknown mutant 'keys-reusd' \(known: commit-at-prepare, /);
  for (const m of CLINK_MUTANT_NAMES) {
    writeFileSync(file, JSON.stringify({ ...base, mutant: m }));
    t.equal(readConfig(file).mutant, m);
  }
  writeFileSync(file, JSON.stringify(base));
  t.equal(readConfig(file).mutant, undefined, 'no mutant: the correct engine');
});
