/**
 * bench/oracle.ts's CLINK_QUAL_STORE_PID: a PID that is no live process here is refused
 * before any store is touched; bench/jvm-producer.ts's processCpuS, which reads it, counts a
 * busy process's CPU.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { processCpuS } from '../../../bench/jvm-producer.ts';

const root = path.resolve(import.meta.dirname, '..', '..', '..');

t.test('a store PID that is not a live process: exit 254, said, nothing touched', async (t) => {
  // Port 9 on loopback: nothing listens, so a bench that went on would fail otherwise.
  const r = spawnSync(process.execPath, [path.join(root, 'bench', 'oracle.ts'), '--events', '10'], {
    encoding: 'utf8',
    env: { ...process.env, CLINK_QUAL_S3_ENDPOINT: 'http://127.0.0.1:9', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b', CLINK_QUAL_STORE_PID: '999999999' },
    timeout: 30_000,
  });
  t.equal(r.status, 254);
  t.match(r.stderr, /CLINK_QUAL_STORE_PID=999999999 is not a live process here/);
  t.notMatch(r.stdout + r.stderr, /wrote|round 1/, 'no dataset written, no round run');
});

t.test("processCpuS: a busy child's CPU grows; a gone one is null", async (t) => {
  const child = spawnSync(process.execPath, ['-e', 'const t = Date.now(); while (Date.now() - t < 400); console.log(process.pid)'], { encoding: 'utf8' });
  t.equal(processCpuS(Number(child.stdout.trim())), null, 'the child is gone');
  // Busy until this process has used 300 ms more CPU by its own count (the unit tests run at
  // nice 19 beside the rig: wall time says nothing of the CPU got), then /proc's figure.
  const c0 = processCpuS(process.pid)!;
  const u0 = process.cpuUsage();
  for (;;) {
    const u = process.cpuUsage(u0);
    if (u.user + u.system >= 300_000) break;
  }
  const c1 = processCpuS(process.pid)!;
  t.ok(c1 - c0 >= 0.25, `300 ms of CPU by process.cpuUsage, ${(c1 - c0).toFixed(2)} s by /proc (10 ms ticks)`);
});
