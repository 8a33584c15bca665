/**
 * The lost-unsynced-writes fault (chaos/lost-unsynced-writes.ts): which calls in flight a
 * frozen process's /proc syscall lines show, how far a declared log is cut, and the whole
 * path against a stand-in engine process on this machine (a local Remote over a temp dir).
 */
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inFlightWrites, lastSyncedLength, lostUnsyncedWrites } from '../../../chaos/lost-unsynced-writes.ts';
import type { FaultContext } from '../../../chaos/fault.ts';
import { encodeRecord } from '../../../engine/clink/durable-log.ts';
import type { Engine, EngineProcess } from '../../../engine/engine.ts';
import { clinkEngine } from '../../../engine/clink/plug.ts';
import { servicePid } from '../../../rig/process.ts';
import type { RigState } from '../../../rig/types.ts';
import { localRemote } from '../../helpers/local-remote.ts';

t.test('inFlightWrites: write and sync calls with their descriptor, per architecture; nothing for a thread outside a call', async (t) => {
  const lines = ['74 0x15 0x0 0x0 0x0 0x0 0x0 0x7ffd 0x7f01', 'running', '-1 0x7ffd 0x7f01', '232 0x4 0x7ffd 0x400 0xffffffff 0x0 0x0 0x7ffd 0x7f01', '1 0xa 0x55 0x40 0 0 0 0x1 0x2'];
  t.same(inFlightWrites(lines, 'x86_64'), [
    { call: 'fsync', fd: 21 },
    { call: 'write', fd: 10 },
  ], 'fsync on fd 21 and write on fd 10; epoll_wait (232) is not a write');
  t.same(inFlightWrites(['82 0x3 0 0 0 0 0 0x1 0x2', '74 0x5 0 0 0 0 0 0x1 0x2'], 'aarch64'), [{ call: 'fsync', fd: 3 }], 'arm64 numbers: 82 is fsync, 74 is not');
  t.same(inFlightWrites(lines, 'sparc'), [], 'an unknown architecture: nothing known in flight');
});

t.test('lastSyncedLength: the end of the newest complete record, or its start when a write or fsync on the file was in flight', async (t) => {
  const a = encodeRecord({ id: 1 });
  const b = encodeRecord({ id: 2 });
  const log = Buffer.from(a + b + '0badc0de {"id":3');
  t.equal(lastSyncedLength(log, false), Buffer.byteLength(a + b), 'the torn tail goes');
  t.equal(lastSyncedLength(log, true), Buffer.byteLength(a), 'the newest record goes too: its fsync had not returned');
  t.equal(lastSyncedLength(Buffer.from(a + b), false), Buffer.byteLength(a + b), 'nothing unsynced: nothing cut');
  t.equal(lastSyncedLength(Buffer.from('torn'), false), 0);
  t.equal(lastSyncedLength(Buffer.alloc(0), true), 0);
});

t.test('inject: the process frozen and killed, each declared log cut to its last fsynced length, the process started again', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lost-unsynced-'));
  const remote = localRemote(dataDir, 'coordinator');
  const svc = 'clink-coordinator';
  const svcDir = path.join(dataDir, 'services', svc);
  mkdirSync(svcDir, { recursive: true });
  const logFile = path.join(dataDir, 'state/clink/checkpoints.log');
  mkdirSync(path.dirname(logFile), { recursive: true });
  const good = encodeRecord({ t: 'epoch', epoch: 1 }) + encodeRecord({ t: 'complete', id: 1, epoch: 1, offsets: { '0': 5 } });
  writeFileSync(logFile, good + '12345678 {"t":"barr');
  const start = async () => {
    await remote.exec(`(nohup sleep 300 > /dev/null 2>&1 & echo $! > ${svcDir}/pid)`);
    return servicePid(remote, svc);
  };
  const proc = async (): Promise<EngineProcess> => ({ host: 'coordinator', role: 'coordinator', service: svc, pid: await servicePid(remote, svc) });
  const first = await start();
  const engine = { ...clinkEngine(), name: 'clink', durableFiles: clinkEngine().durableFiles, processes: async () => [await proc()], restart: async () => (await start(), proc()) } as unknown as Engine;
  const rig = { hosts: [{ name: 'coordinator', address: '127.0.0.1', roles: ['coordinator'], dataDir }] } as unknown as RigState;
  const ctx = { rig, remote: () => remote, engine, log: () => {} } as unknown as FaultContext;
  const landed = await lostUnsyncedWrites.inject({ id: 'f1', kind: 'lost-unsynced-writes', atS: 0, target: 'coordinator' }, ctx);
  t.teardown(async () => {
    const p = await servicePid(remote, svc);
    if (p) process.kill(p, 'SIGKILL');
  });
  const ev = landed.evidence as { pid: number; inFlight: unknown[]; lostBytes: number; cuts: { file: string; bytesBefore: number; bytesAfter: number; lostBytes: number; inFlight: boolean }[]; restartedPid: number };
  t.equal(ev.pid, first);
  t.same(ev.inFlight, [], 'sleep writes nothing');
  t.same(ev.cuts, [{ file: logFile, what: 'the completed-checkpoint log (crc32 per record)', bytesBefore: Buffer.byteLength(good) + 19, bytesAfter: Buffer.byteLength(good), lostBytes: 19, inFlight: false }]);
  t.equal(ev.lostBytes, 19, 'the torn tail\'s 19 bytes, in all');
  t.equal(readFileSync(logFile, 'utf8'), good, 'the torn tail is gone from the disk');
  t.not(ev.restartedPid, first);
  t.ok(ev.restartedPid);
  t.match(await landed.heal(), { host: 'coordinator', running: true, pid: ev.restartedPid });
  // Again, on a log already at its synced length: a crash that lost no write records 0 lost bytes.
  const again = (await lostUnsyncedWrites.inject({ id: 'f2', kind: 'lost-unsynced-writes', atS: 1, target: 'coordinator' }, ctx)).evidence as typeof ev;
  t.same(again.cuts.map((c) => [c.bytesBefore, c.bytesAfter, c.lostBytes]), [[Buffer.byteLength(good), Buffer.byteLength(good), 0]]);
  t.equal(again.lostBytes, 0, 'nothing cut, nothing lost');
  t.equal(readFileSync(logFile, 'utf8'), good);
});
