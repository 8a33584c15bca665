/** rig/host-files.ts's commands, run by bash on folders of this machine: a dataDir claimed, then taken back by rig down and rig down --purge. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { claimDataDirCommand, DATA_DIR_MARKER, removeHostFilesCommand } from '../../../rig/host-files.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'cq-host-files-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
const bash = (cmd: string) => {
  const r = spawnSync('bash', ['-c', cmd], { encoding: 'utf8' });
  return r.status;
};
const KEPT = ['opt', 'bin', 'minio-data'];
/** What the rig puts in a dataDir: kept things, runtime things, a dotfile. */
function populate(d: string) {
  for (const e of ['opt/kafka', 'bin', 'minio-data/clink-qual', 'services/kafka', 'kafka/data', '.upload-admin']) mkdirSync(path.join(d, e), { recursive: true });
  writeFileSync(path.join(d, 'services/kafka/out.log'), 'x');
  writeFileSync(path.join(d, 'bin/node'), 'x');
}

t.test('a dataDir the rig created: down keeps the kept entries and the marker; purge removes it and the empty folders it created above it', async (t) => {
  const base = path.join(root, 'a');
  mkdirSync(path.join(base, 'srv'), { recursive: true });
  writeFileSync(path.join(base, 'srv', 'other'), 'not ours');
  const d = path.join(base, 'srv/cqb/app-2/engine');
  t.equal(bash(claimDataDirCommand(d)), 0);
  t.equal(readFileSync(path.join(d, DATA_DIR_MARKER), 'utf8'), `${path.join(base, 'srv/cqb')}\n`, 'the marker names the outermost folder it created');
  t.equal(bash(claimDataDirCommand(d)), 0, 'claiming again');
  t.equal(readFileSync(path.join(d, DATA_DIR_MARKER), 'utf8'), `${path.join(base, 'srv/cqb')}\n`, 'keeps the first claim');
  populate(d);
  t.equal(bash(removeHostFilesCommand(d, false, KEPT)), 0);
  t.same(readdirSync(d).sort(), [DATA_DIR_MARKER, 'bin', 'minio-data', 'opt'].sort(), 'rig down: only what is kept');
  t.ok(existsSync(path.join(d, 'bin/node')), 'with its contents');
  mkdirSync(path.join(base, 'srv/cqb/app-9'));
  t.equal(bash(removeHostFilesCommand(d, true, KEPT)), 0);
  t.notOk(existsSync(path.join(base, 'srv/cqb/app-2')), 'purge: dataDir and the empty folder above it are gone');
  t.ok(existsSync(path.join(base, 'srv/cqb/app-9')), 'a folder that is not empty stays (and so does its parent)');
  t.ok(existsSync(path.join(base, 'srv/other')), 'nothing outside is touched');
  t.equal(bash(removeHostFilesCommand(d, true, KEPT)), 0, 'purge again: nothing there, fine');
  t.equal(bash(removeHostFilesCommand(d, false, KEPT)), 0, 'down with no dataDir: fine');
});

t.test("a dataDir that was there before the rig: purge empties it and leaves the folder; a marker naming another place is not believed", async (t) => {
  const d = path.join(root, 'b/opt/clink-qual');
  mkdirSync(d, { recursive: true });
  t.equal(bash(claimDataDirCommand(d)), 0);
  t.notOk(existsSync(path.join(d, DATA_DIR_MARKER)), 'no marker: the folder was there');
  populate(d);
  t.equal(bash(removeHostFilesCommand(d, true, KEPT)), 0);
  t.same(readdirSync(d), [], 'purge: emptied, dotfiles too');
  t.ok(existsSync(d), 'the folder stays');
  writeFileSync(path.join(d, DATA_DIR_MARKER), `${path.join(root, 'elsewhere')}\n`);
  t.equal(bash(removeHostFilesCommand(d, true, KEPT)), 0);
  t.ok(existsSync(d), 'a marker that names no folder above dataDir: emptied only');
});

t.test('names with quotes reach bash quoted', async (t) => {
  t.match(removeHostFilesCommand("/srv/it's", false, KEPT), /cd -- '\/srv\/it'\\''s'/);
});
