/**
 * The recount's Node flags (oracle/recount-flags.ts): the pinned Node takes them, and
 * ./clink-qual runs `verify` with exactly them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../../lib/paths.ts';
import { RECOUNT_NODE_FLAGS } from '../../../oracle/recount-flags.ts';

t.test('the pinned Node starts with the flags, and a V8 flag it takes shows in its execArgv', async (t) => {
  t.ok(RECOUNT_NODE_FLAGS.length > 0);
  const out = execFileSync(process.execPath, [...RECOUNT_NODE_FLAGS, '-e', 'console.log(JSON.stringify(process.execArgv))'], { encoding: 'utf8' });
  t.same((JSON.parse(out) as string[]).slice(0, RECOUNT_NODE_FLAGS.length), RECOUNT_NODE_FLAGS);
  // Node refuses a flag it does not know: the check above would have thrown.
  t.throws(() => execFileSync(process.execPath, ['--initial-old-spaec-size=256', '-e', '0'], { stdio: 'ignore' }), 'a misspelt flag is refused, so the check above means something');
});

t.test('./clink-qual runs verify with exactly these flags, and nothing else with them', async (t) => {
  const wrapper = readFileSync(path.join(repoRoot, 'clink-qual'), 'utf8');
  const execs = [...wrapper.matchAll(/^\s*exec node (.*)"\$here\/bin\/clink-qual\.ts" "\$@"$/gm)].map((m) => m[1]!.trim());
  t.same(execs, [RECOUNT_NODE_FLAGS.join(' '), ''], 'one exec for verify with the flags, then the plain one');
  t.match(wrapper, /if \[ "\$\{1:-\}" = verify \]; then\n\s*exec node --initial-old-space-size/, 'the flagged exec is the one for verify');
});
