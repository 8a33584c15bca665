/**
 * The state-corruption fault (chaos/state-corruption.ts): what it corrupts, given a file's
 * content (pure), how it patches and records it, and the whole inject/heal path against a
 * stand-in engine process on this machine (a local Remote over a temp dir) that opens a
 * real Clink checkpoint log (engine/clink/durable-log.ts) the way the coordinator does:
 * the correct reading refuses the corrupted record and stops (the heal repairs and restarts
 * it); MUTANT unchecked-log's reading goes on (the heal records it running).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyCorruption, existingDurableFiles, newestRecord, numberLastDigits, patchCommand, planCorruption, REACTION_WATCH_MS, seededIndex, stateCorruption, watchReaction } from '../../../chaos/state-corruption.ts';
import type { FaultContext } from '../../../chaos/fault.ts';
import { DurableLog, encodeRecord, parseLog } from '../../../engine/clink/durable-log.ts';
import type { Engine, EngineDurableFile, EngineProcess, EngineRole } from '../../../engine/engine.ts';
import { clinkEngine } from '../../../engine/clink/plug.ts';
import { flinkEngine } from '../../../engine/flink/plug.ts';
import { servicePid } from '../../../rig/process.ts';
import type { RigState } from '../../../rig/types.ts';
import { localRemote } from '../../helpers/local-remote.ts';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'state-corruption-'));
const LOG_FILE: Pick<EngineDurableFile, 'writes' | 'restoreRecordMarker' | 'restoreKey'> = { writes: 'records', restoreRecordMarker: '"t":"complete"', restoreKey: 'offsets' };

function checkpointLog(): Buffer {
  return Buffer.from(
    encodeRecord({ t: 'epoch', epoch: 1, at: '2026-12-04T10:00:00.000Z' }) +
      encodeRecord({ t: 'complete', id: 7, epoch: 1, at: '2026-12-04T10:00:08.000Z', offsets: { '0': 1200, '1': 1190 }, handles: [{ key: 'p/subtask=0/epoch=1/chk=7.jsonl', bytes: 5123 }] }) +
      encodeRecord({ t: 'barrier', id: 8, epoch: 1, at: '2026-12-04T10:00:16.000Z' }) +
      encodeRecord({ t: 'complete', id: 8, epoch: 1, at: '2026-12-04T10:00:16.500Z', offsets: { '0': 2405, '1': 2398 }, handles: [{ key: 'p/subtask=0/epoch=1/chk=8.jsonl', bytes: 5310 }] }) +
      encodeRecord({ t: 'barrier', id: 9, epoch: 1, at: '2026-12-04T10:00:24.000Z' }),
  );
}

t.test('newestRecord: the last newline-terminated line, or the last containing the marker; a torn tail is no record', async (t) => {
  const buf = Buffer.from('aa\nbbb\ncc');
  t.same(newestRecord(buf), { start: 3, end: 6 }, 'the torn tail "cc" is skipped');
  t.same(newestRecord(Buffer.from('aa\nbbb\n')), { start: 3, end: 6 });
  t.same(newestRecord(Buffer.from('x1\ny\nx2\nz\n'), 'x'), { start: 5, end: 7 });
  t.same(newestRecord(Buffer.from('a\n')), { start: 0, end: 1 });
  t.equal(newestRecord(Buffer.from('no newline')), null);
  t.equal(newestRecord(Buffer.from('a\nb\n'), 'q'), null);
});

t.test('numberLastDigits: the last digit of each JSON number outside strings, under the key when given', async (t) => {
  const rec = Buffer.from('{"t":"complete","id":17,"at":"2026-12-04","offsets":{"0":1200,"1":95},"n":3}');
  const all = numberLastDigits(rec, 0, rec.length).map((i) => String.fromCharCode(rec[i]!));
  t.same(all, ['7', '0', '5', '3'], 'id 17, offsets 1200 and 95, n 3; no digit of the date string or of the keys "0", "1"');
  const under = numberLastDigits(rec, 0, rec.length, 'offsets').map((i) => rec.subarray(i - 3, i + 1).toString());
  t.same(under, ['1200', '":95'], 'only the offsets');
  t.same(numberLastDigits(rec, 0, rec.length, 'absent').length, 4, 'a missing key: the whole record');
});

t.test('bitflip: one bit of an offset digit in the newest completed record; the JSON still parses, only the checksum fails', async (t) => {
  const content = checkpointLog();
  const plan = planCorruption(content, LOG_FILE, 'bitflip', 'f003')!;
  const rec = content.subarray(plan.record.start, plan.record.end).toString();
  t.match(rec, /"t":"complete","id":8,/, 'the newest record a restore reads, not the later barrier');
  t.equal(plan.after.length, 1);
  t.equal(plan.before[0]! ^ plan.after[0]!, 0x01, 'exactly one bit, the lowest');
  const offsetsAt = plan.record.start + rec.indexOf('"offsets"');
  const handlesAt = plan.record.start + rec.indexOf('"handles"');
  t.ok(plan.offset > offsetsAt && plan.offset < handlesAt, 'inside the offsets');
  const after = applyCorruption(content, plan);
  t.equal(after.length, content.length);
  t.equal(Buffer.compare(after.subarray(0, plan.offset), content.subarray(0, plan.offset)), 0, 'nothing before it changed');
  const line = after.subarray(plan.record.start, plan.record.end).toString();
  const json = JSON.parse(line.slice(9)) as { offsets: Record<string, number> };
  const diff = Math.abs(json.offsets['0']! - 2405) + Math.abs(json.offsets['1']! - 2398);
  t.equal(diff, 1, 'one offset moved by one: parseable, and wrong');
  t.same(planCorruption(content, LOG_FILE, 'bitflip', 'f003'), plan, 'the same fault id plans the same flip');
  const parsed = parseLog(after);
  t.equal(parsed.records.length, 3, 'the checksum stops the reading at the flipped record');
  t.equal(parsed.badLineComplete, true);
  t.equal(parseLog(after, { unchecked: true }).records.length, 5, 'MUTANT unchecked-log reads every record, the flipped one included');
});

t.test('torn: the second half of the newest completed record zeroed, its length and newline kept', async (t) => {
  const content = checkpointLog();
  const plan = planCorruption(content, LOG_FILE, 'torn', 'f004')!;
  const len = plan.record.end - plan.record.start;
  t.equal(plan.after.length, len - Math.floor(len / 2));
  t.equal(plan.offset + plan.after.length, plan.record.end, 'up to the newline, not over it');
  t.ok(plan.after.every((b) => b === 0));
  t.same(plan.before, content.subarray(plan.offset, plan.record.end));
  const after = applyCorruption(content, plan);
  t.equal(after[plan.record.end], 0x0a, 'the newline stays');
  t.equal(parseLog(after).records.length, 3);
});

t.test('a file written whole: any byte for a flip, at most 4 KiB of its tail zeroed for a tear; nothing to corrupt in an empty file', async (t) => {
  const bin = Buffer.alloc(20000, 0xab);
  const flip = planCorruption(bin, { writes: 'whole' }, 'bitflip', 'f1')!;
  t.equal(flip.before[0], 0xab);
  t.equal(flip.after[0], 0xaa);
  const torn = planCorruption(bin, { writes: 'whole' }, 'torn', 'f1')!;
  t.equal(torn.after.length, 4096);
  t.equal(torn.offset, 20000 - 4096);
  t.equal(planCorruption(Buffer.alloc(0), { writes: 'whole' }, 'torn', 'f1'), null);
  t.equal(planCorruption(Buffer.from('torn tail only'), LOG_FILE, 'bitflip', 'f1'), null, 'no complete record');
});

t.test('seededIndex is stable and in range', async (t) => {
  const seen = new Set<number>();
  for (let i = 0; i < 50; i++) {
    const n = seededIndex(`f${i}`, 'file', 3);
    t.ok(n >= 0 && n < 3);
    seen.add(n);
  }
  t.equal(seen.size, 3, 'every index drawn over 50 ids');
  t.equal(seededIndex('f1', 'x', 1000), seededIndex('f1', 'x', 1000));
  t.throws(() => seededIndex('f1', 'x', 0));
});

t.test('patchCommand writes the exact bytes in place, keeping the length', async (t) => {
  const dir = tmp();
  const file = path.join(dir, 'a b.log');
  writeFileSync(file, 'hello world\n');
  const r = spawnSync('bash', ['-c', patchCommand(file, 6, Buffer.from([0x00, 0x57, 0x27, 0xff]))]);
  t.equal(r.status, 0, r.stderr.toString());
  t.same([...readFileSync(file)], [...Buffer.from('hello '), 0x00, 0x57, 0x27, 0xff, ...Buffer.from('d\n')]);
});

t.test('the plugs declare their durable files; existingDurableFiles expands globs newest first, skips empty files, restore files first', async (t) => {
  const host = { name: 'coordinator', dataDir: '/d' };
  const clink = clinkEngine();
  t.same(clink.durableFiles!(host, 'coordinator').map((f) => [f.path, f.writes, f.restoredFrom]), [['/d/state/clink/checkpoints.log', 'records', true]]);
  t.same(clink.durableFiles!(host, 'worker').map((f) => [f.path, f.restoredFrom]), [['/d/state/clink/journal.jsonl', false]]);
  const flink = flinkEngine();
  t.same(flink.durableFiles!(host, 'coordinator').map((f) => [f.path, f.glob, f.writes, f.restoredFrom]), [
    ['/d/state/flink/checkpoints/*/chk-*/_metadata', true, 'whole', false],
    ['/d/state/flink/ha/*/completedCheckpoint*', true, 'whole', true],
  ], 'under HA a JobManager restores from the handle; the metadata file only from a path, never asked');
  t.same(flink.durableFiles!(host, 'worker'), []);

  const dir = tmp();
  mkdirSync(path.join(dir, 'cp/j1/chk-3'), { recursive: true });
  mkdirSync(path.join(dir, 'cp/j1/chk-4'), { recursive: true });
  writeFileSync(path.join(dir, 'cp/j1/chk-3/_metadata'), 'x');
  writeFileSync(path.join(dir, 'cp/j1/chk-4/_metadata'), '');
  mkdirSync(path.join(dir, 'cp/j1/chk-10'), { recursive: true });
  writeFileSync(path.join(dir, 'cp/j1/chk-10/_metadata'), 'y');
  utimesSync(path.join(dir, 'cp/j1/chk-3/_metadata'), new Date('2026-12-05T10:00:00Z'), new Date('2026-12-05T10:00:00Z'));
  utimesSync(path.join(dir, 'cp/j1/chk-10/_metadata'), new Date('2026-12-05T10:00:08Z'), new Date('2026-12-05T10:00:08Z'));
  writeFileSync(path.join(dir, 'journal'), 'j\n');
  const found = await existingDurableFiles(localRemote(dir), [
    { path: path.join(dir, 'journal'), role: 'worker', what: 'j', writes: 'records', restoredFrom: false },
    { path: path.join(dir, 'cp/*/chk-*/_metadata'), glob: true, role: 'worker', what: 'm', writes: 'whole', restoredFrom: true },
    { path: path.join(dir, 'missing'), role: 'worker', what: 'x', writes: 'records', restoredFrom: true },
  ]);
  t.same(found.map((f) => [path.relative(dir, f.path), f.glob]), [
    ['cp/j1/chk-10/_metadata', false],
    ['cp/j1/chk-3/_metadata', false],
    ['journal', false],
  ], 'a glob newest first (by mtime, not by name), the empty one skipped, the restored-from first');
});

t.test("a binary file whose plug names the numbers a restore resumes from: the flip falls on the lowest bit of one of them", async (t) => {
  const content = Buffer.from('0123456789abcdef');
  const file = { writes: 'whole' as const, restoreNumbers: () => [{ offset: 3, what: 'offset of p0: 3' }, { offset: 9, what: 'offset of p1: 9' }] };
  for (const seed of ['f001', 'f002', 'f003', 'f004']) {
    const plan = planCorruption(content, file, 'bitflip', seed)!;
    const expected = [3, 9][seededIndex(seed, 'bitflip', 2)]!;
    t.equal(plan.offset, expected, `${seed}: the seeded number`);
    t.equal(plan.after[0]! ^ plan.before[0]!, 1, `${seed}: its lowest bit`);
    t.equal(plan.aimedAt, expected === 3 ? 'offset of p0: 3' : 'offset of p1: 9', `${seed}: named in the plan`);
  }
  t.equal(planCorruption(content, { writes: 'whole', restoreNumbers: () => [] }, 'bitflip', 'f001'), null, 'none there: nothing to flip (the fault does not land)');
  const torn = planCorruption(content, file, 'torn', 'f001')!;
  t.same([torn.offset, torn.after.length, torn.aimedAt], [8, 8, undefined], 'a tear is the second half, as for any whole file');
});

t.test('watchReaction: the minimum watch without the plug\'s word; with it, on until it says restored, the process stops, or the maximum', async (t) => {
  const host = 'coordinator';
  let pid: number | null = 42;
  let restored = false;
  let asked = 0;
  const processes = async () => [{ host, role: 'coordinator' as const, service: 's', pid }];
  const plain = { processes };
  let r = await watchReaction(plain, host, 'coordinator', 120, { pollMs: 20 });
  t.same([r.pid, r.restored], [42, undefined], 'no restoredAfterStart: running after the minimum');
  t.ok(r.watchedS >= 0.1, `watched ${r.watchedS} s`);

  const withWord = { processes, restoredAfterStart: async () => (asked++, restored) };
  setTimeout(() => (restored = true), 250);
  r = await watchReaction(withWord, host, 'coordinator', 50, { pollMs: 20, maxMs: 5000 });
  t.same([r.pid, r.restored], [42, true], 'running once the plug says it read its files');
  t.ok(r.watchedS >= 0.2 && r.watchedS < 5, `not before (${r.watchedS} s)`);
  t.ok(asked > 1, 'asked again while it had not');

  restored = false;
  setTimeout(() => (pid = null), 200);
  r = await watchReaction(withWord, host, 'coordinator', 50, { pollMs: 20, maxMs: 5000 });
  t.same([r.pid, r.restored], [null, false], 'a process that stops while its files are read: stopped (Flink\'s JobManager refusing a torn handle)');

  pid = 7;
  r = await watchReaction(withWord, host, 'coordinator', 50, { pollMs: 20, maxMs: 300 });
  t.same([r.pid, r.restored], [7, false], 'up and never restored within the maximum: still running, restored false');
  t.ok(r.watchedS >= 0.3, 'the maximum was waited');
  t.equal(REACTION_WATCH_MS, 10_000);
});

// ---- inject and heal against a stand-in coordinator on this machine ----

const DURABLE_LOG = path.resolve('engine/clink/durable-log.ts');

/** A stand-in engine: its coordinator "process" opens the checkpoint log as Clink's does, then idles (or exits 3, saying why). */
function standIn(dataDir: string, unchecked: boolean): Engine {
  const remote = localRemote(dataDir, 'coordinator');
  const svc = 'clink-coordinator';
  const svcDir = path.join(dataDir, 'services', svc);
  const logFile = path.join(dataDir, 'state/clink/checkpoints.log');
  const start = async (): Promise<number | null> => {
    mkdirSync(svcDir, { recursive: true });
    const script =
      `import { DurableLog } from ${JSON.stringify(DURABLE_LOG)};` +
      `try { const o = DurableLog.open(${JSON.stringify(logFile)}, { uncheckedRecords: ${unchecked} }); console.log('log has ' + o.records.length + ' records'); }` +
      `catch (e) { console.log('FATAL: ' + e.message); process.exit(3); }` +
      `setInterval(() => {}, 1000);`;
    await remote.exec(`cd ${JSON.stringify(process.cwd())} && (nohup node --input-type=module -e ${JSON.stringify(script).replace(/\$/g, '\\$')} >> ${svcDir}/out.log 2>&1 & echo $! > ${svcDir}/pid)`);
    await new Promise((r) => setTimeout(r, 300));
    return servicePid(remote, svc);
  };
  const proc = async (): Promise<EngineProcess> => ({ host: 'coordinator', role: 'coordinator', service: svc, pid: await servicePid(remote, svc) });
  return {
    ...clinkEngine(),
    name: 'clink',
    durableFiles: (h, role: EngineRole) => clinkEngine().durableFiles!(h, role),
    processes: async () => [await proc()],
    restart: async () => {
      await start();
      return proc();
    },
    start: async () => {
      await start();
    },
  } as Engine;
}

async function waitUntil(cond: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return cond();
}

for (const unchecked of [false, true]) {
  t.test(`inject and heal, ${unchecked ? 'MUTANT unchecked-log: the coordinator runs on from the flipped record' : 'correct: the coordinator refuses the flipped record, is repaired and restarted'}`, async (t) => {
    const dataDir = tmp();
    const logFile = path.join(dataDir, 'state/clink/checkpoints.log');
    mkdirSync(path.dirname(logFile), { recursive: true });
    writeFileSync(logFile, checkpointLog());
    const original = readFileSync(logFile);
    const engine = standIn(dataDir, unchecked);
    await engine.start();
    const firstPid = (await engine.processes())[0]!.pid;
    t.ok(firstPid, 'the stand-in runs');
    const rig = { hosts: [{ name: 'coordinator', address: '127.0.0.1', roles: ['coordinator'], dataDir }] } as unknown as RigState;
    const ctx = { rig, remote: () => localRemote(dataDir, 'coordinator'), engine, log: () => {} } as unknown as FaultContext;
    const landed = await stateCorruption.inject({ id: 'f003', kind: 'state-corruption', atS: 0, target: 'coordinator', variant: 'bitflip', durationS: 10 }, ctx);
    t.teardown(async () => {
      const pid = (await engine.processes())[0]!.pid;
      if (pid) process.kill(pid, 'SIGKILL');
    });
    const ev = landed.evidence as Record<string, unknown>;
    t.equal(ev.file, logFile);
    t.equal(ev.killedPid, firstPid);
    t.equal(ev.variant, 'bitflip');
    const plan = planCorruption(original, LOG_FILE, 'bitflip', 'f003')!;
    t.same([ev.offset, ev.before, ev.after], [plan.offset, plan.before.toString('hex'), plan.after.toString('hex')], 'evidence: offset, bytes before and after');
    t.same(readFileSync(logFile), applyCorruption(original, plan), 'the file on disk holds exactly the planned corruption');
    if (!unchecked) {
      t.ok(await waitUntil(async () => (await engine.processes())[0]!.pid === null, 10_000), 'the correct reading stops');
      const healed = await landed.heal();
      t.equal(healed.reaction, 'stopped');
      t.match((healed.lastLines as string[]).join('\n'), /FATAL: .*a corrupt line at byte \d+ is followed by 1 good records/, 'its own words: the barrier after the flipped record is good');
      t.match((healed.errorLines as string[]).join('\n'), /FATAL: .*a corrupt line at byte \d+/, 'the refusal among the lines that name an error');
      t.same(readFileSync(logFile), original, 'repaired: the original bytes back');
      t.ok(healed.restartedPid);
      t.ok(await waitUntil(async () => (await engine.processes())[0]!.pid !== null, 2000), 'runs again on the repaired log');
      t.same(DurableLog.open(logFile).records.length, 5);
    } else {
      await new Promise((r) => setTimeout(r, 1500));
      const healed = await landed.heal();
      t.equal(healed.reaction, 'running', 'the mutant went on from the corrupted record');
      t.notSame(readFileSync(logFile), original, 'nothing repaired: the oracle judges what it committed');
    }
  });
}

t.test('a fault without a variant, or an engine that declares no durable files, does not land', async (t) => {
  const dataDir = tmp();
  const rig = { hosts: [{ name: 'coordinator', address: '127.0.0.1', roles: ['coordinator'], dataDir }] } as unknown as RigState;
  const engine = { name: 'x', processes: async () => [{ host: 'coordinator', role: 'coordinator', service: 's', pid: 1 }] } as unknown as Engine;
  const ctx = { rig, remote: () => localRemote(dataDir), engine, log: () => {} } as unknown as FaultContext;
  await t.rejects(stateCorruption.inject({ id: 'f1', kind: 'state-corruption', atS: 0 }, ctx), { name: 'FaultNotLanded', message: /needs a variant/ });
  await t.rejects(stateCorruption.inject({ id: 'f1', kind: 'state-corruption', atS: 0, variant: 'torn' }, ctx), { name: 'FaultNotLanded', message: /declares no durable files/ });
});
