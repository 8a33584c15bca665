/**
 * The armed-points file both plugs share: arming keeps the other points, a torn or absent
 * file reads as nothing armed, and the file is replaced by a rename (never written in place).
 */
import t from 'tap';
import { armPoint, readArmed, writeArmed } from '../../../engine/armed-points.ts';
import type { Remote } from '../../../rig/remote.ts';

/** A host's files in memory, answering the three commands the module sends. */
function fakeHost(files: Map<string, string>) {
  const commands: string[] = [];
  const unq = (s: string) => s.replace(/^'|'$/g, '');
  const remote = {
    async exec(cmd: string) {
      commands.push(cmd);
      let m = /^cat (\S+) 2>\/dev\/null$/.exec(cmd);
      if (m) return { code: 0, stdout: files.get(unq(m[1]!)) ?? '', stderr: '' };
      m = /^mv -f (\S+) (\S+)$/.exec(cmd);
      if (m) {
        files.set(unq(m[2]!), files.get(unq(m[1]!))!);
        files.delete(unq(m[1]!));
      }
      return { code: 0, stdout: '', stderr: '' };
    },
    async writeFile(p: string, body: string) {
      commands.push(`write ${p}`);
      files.set(p, body);
    },
  };
  return { remote: remote as unknown as Remote, commands };
}

const F = '/h/faults/armed.json';

t.test('arming one point keeps the others; the file is replaced by a rename', async (t) => {
  const files = new Map([[F, '{"sink.before-commit":2}']]);
  const { remote, commands } = fakeHost(files);
  t.equal(await armPoint(remote, F, 'sink.after-commit'), 1);
  t.same(JSON.parse(files.get(F)!), { 'sink.before-commit': 2, 'sink.after-commit': 1 });
  t.notOk(files.has(`${F}.plug-tmp`), 'no temporary file left');
  t.ok(commands.some((c) => c.startsWith('write /h/faults/armed.json.plug-tmp')), 'written beside, then moved');
  await armPoint(remote, F, 'sink.after-commit', 3);
  t.same(JSON.parse(files.get(F)!), { 'sink.before-commit': 2, 'sink.after-commit': 3 });
});

t.test('absent or torn reads as nothing armed; disarming writes {}', async (t) => {
  const files = new Map<string, string>();
  const { remote } = fakeHost(files);
  t.same(await readArmed(remote, F), {});
  files.set(F, '{"sink.bef');
  t.same(await readArmed(remote, F), {});
  await writeArmed(remote, F, {});
  t.equal(files.get(F), '{}');
});
