/**
 * The committed oracle/wasm/judge.wasm is what oracle/wasm/judge.as.ts builds to with the
 * pinned compiler (installed under the cache on first use), so the module the oracle runs
 * can be traced to its source; and `npm run build:wasm` has a --help.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { ASC_FLAGS, committedMatchesSource, toolchainDir } from '../../../../oracle/wasm/build.ts';
import { cacheDir, repoRoot } from '../../../../lib/paths.ts';

t.test('the committed module is byte for byte a fresh build of its source', async (t) => {
  const r = committedMatchesSource();
  t.ok(r.built.length > 1000, `built ${r.built.length} bytes`);
  t.ok(r.matches, 'oracle/wasm/judge.wasm matches judge.as.ts: rebuild with npm run build:wasm and commit it otherwise');
  t.ok(toolchainDir().startsWith(cacheDir() + path.sep), 'the compiler lives under the cache, not in the repo');
  t.same(ASC_FLAGS.slice(0, 3), ['-O3', '--runtime', 'stub']);
  const mod = new WebAssembly.Module(new Uint8Array(r.committed));
  t.same(WebAssembly.Module.imports(mod), [], 'the module imports nothing');
});

t.test('build:wasm --help', async (t) => {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'oracle', 'wasm', 'build.ts'), '--help'], { encoding: 'utf8' });
  t.equal(r.status, 0);
  t.match(r.stdout, /usage: npm run build:wasm \[-- --check\]/);
});
