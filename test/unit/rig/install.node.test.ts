import { existsSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../../lib/paths.ts';
import { node } from '../../../rig/install.ts';

// The cache manifest is shared by every clone on a machine; a clone that has since been
// removed must not leave the rig pointing at its Node binary.
t.test('the Node binary for engine hosts is this checkout\'s, whatever the shared manifest says', async (t) => {
  const own = path.join(repoRoot, 'node_modules', 'node', 'bin', 'node');
  const stale = { name: 'node', version: '0.0.1', path: '/gone/clone/node_modules/node/bin/node', sha256: 'f'.repeat(64) };
  const c = await node(stale);
  t.equal(c.path, own);
  t.ok(existsSync(c.path));
  t.match(c.sha256, /^[0-9a-f]{64}$/);
  t.not(c.sha256, stale.sha256);
  const again = await node(c);
  t.same(again, c, 'the entry for this checkout is reused as it is');
});
