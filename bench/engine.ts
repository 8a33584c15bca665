/**
 * Engine benchmark (`npm run bench -- engine`): Clink's exactly-once throughput on the
 * local rig, against a baseline measured in the same run.
 *
 * Both sides drain the same kind of backlog: N JSON-line events pre-loaded into a fresh
 * 4-partition topic (RF 3).
 *  - baseline: raw produce → consume → put, from the operations host: one reader per
 *    partition (the same manual-offset source Clink uses) and one PutObject per partition
 *    per chunk, no checkpoints, no 2PC. Throughput = N / (time to the last put).
 *  - engine: Clink deployed with 8 s checkpoints on a fresh topic; throughput = N / (time
 *    from the job running to every byte committed in the bucket). The bucket is then
 *    recounted line by line: a run with a duplicate or a gap is not a result.
 *
 * The engine figure includes the wait for the checkpoint that commits the backlog, so it
 * is a lower bound on what the engine sustains (on the local rig a 3M-event backlog drains
 * within one or two 8 s checkpoints); raise --events to span more checkpoints.
 *
 * Last line: `RESULT engine events_per_s=<N> ratio_vs_baseline=<r>`.
 * Options: --events N (default 3000000: a backlog that spans several checkpoints), --checkpoint-ms MS (default 8000);
 * --help prints them without touching the rig. Takes the rig lock before it touches the rig.
 */
import { parseArgs } from 'node:util';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { clinkEngine } from '../engine/clink/plug.ts';
import { poll } from '../lib/retry.ts';
import { PartitionSource } from '../engine/clink/source.ts';
import { LineProducer, countBucket, createTopic, rigKit, sleep } from '../test/helpers/rig-kit.ts';
import { optionsOrUsage, takeRigLock } from './cli.ts';

export const USAGE = `Usage: npm run bench -- engine [options]

Clink's exactly-once throughput on the local rig against raw produce -> consume -> put, same
run. Takes the rig lock (exit 2 naming the holder while another command uses the rig).

Options:
  --events N            events pre-loaded into each fresh topic (default 3000000)
  --checkpoint-ms MS    Clink's checkpoint interval (default 8000)
  -h, --help            this text`;

/** The options, or 'help'; an unknown option or an unusable value throws. */
export function parseEngineOptions(args: string[]): { events: number; checkpointMs: number } | 'help' {
  const { values } = parseArgs({
    args,
    options: { events: { type: 'string', default: '3000000' }, 'checkpoint-ms': { type: 'string', default: '8000' }, help: { type: 'boolean', short: 'h', default: false } },
  });
  if (values.help) return 'help';
  const events = Number(values.events);
  const checkpointMs = Number(values['checkpoint-ms']);
  if (!Number.isInteger(events) || events < 1) throw new Error(`--events: a positive integer, not ${values.events}`);
  if (!Number.isInteger(checkpointMs) || checkpointMs < 100) throw new Error(`--checkpoint-ms: an integer of at least 100, not ${values['checkpoint-ms']}`);
  return { events, checkpointMs };
}

async function bucketBytes(kit: ReturnType<typeof rigKit>, bucket: string, prefix: string): Promise<number> {
  let total = 0;
  let token: string | undefined;
  do {
    const r = await kit.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of r.Contents ?? []) total += o.Size ?? 0;
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return total;
}

async function preload(kit: ReturnType<typeof rigKit>, topic: string, events: number): Promise<{ seq: number[]; bytes: number }> {
  await createTopic(kit.bootstrap, topic, 4, 3);
  const producer = new LineProducer(kit.bootstrap, topic, 4);
  const t0 = Date.now();
  await producer.produce(events, 2000);
  await producer.close();
  const line = (p: number, s: number): number => Buffer.byteLength(JSON.stringify({ p, seq: s, pad: producer.pad })) + 1;
  let bytes = 0;
  for (let p = 0; p < 4; p++) for (let s = 0; s < producer.seq[p]!; s++) bytes += line(p, s);
  console.log(`preloaded ${events} events (${(bytes / 1e6).toFixed(1)} MB) into ${topic} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { seq: [...producer.seq], bytes };
}

async function baseline(kit: ReturnType<typeof rigKit>, runId: string, events: number): Promise<number> {
  const topic = `clink-bench-base-${runId}`;
  const { seq } = await preload(kit, topic, events);
  const bucket = kit.state.store.bucket;
  const prefix = `bench-base-${runId}/`;
  const chunk = 20_000;
  const t0 = Date.now();
  await Promise.all(
    [0, 1, 2, 3].map(async (p) => {
      const src = new PartitionSource({ bootstrap: kit.bootstrap, topic, partition: p, startOffset: 0, clientId: `bench-base-${p}` });
      await src.start();
      let n = 0;
      let part = 0;
      let lines: string[] = [];
      const put = async (): Promise<void> => {
        if (!lines.length) return;
        const body = lines.join('\n') + '\n';
        lines = [];
        await kit.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}p${p}/part-${part++}.jsonl`, Body: body }));
      };
      while (n < seq[p]!) {
        await src.whenReadable();
        let r;
        while ((r = src.next())) {
          lines.push(r.value.toString('utf8'));
          n++;
          if (lines.length >= chunk) await put();
        }
      }
      await put();
      await src.close();
    }),
  );
  const s = (Date.now() - t0) / 1000;
  const rate = events / s;
  console.log(`baseline: ${events} events consumed and put in ${s.toFixed(1)} s = ${Math.round(rate)} events/s`);
  return rate;
}

async function engineRun(kit: ReturnType<typeof rigKit>, runId: string, events: number, checkpointMs: number): Promise<number> {
  const topic = `clink-bench-eng-${runId}`;
  const { seq, bytes } = await preload(kit, topic, events);
  const bucket = kit.state.store.bucket;
  const prefix = `bench-eng-${runId}/`;
  const engine = clinkEngine();
  try {
    await engine.deploy(kit.ctx(runId, (l) => console.log(l)), { topic, partitions: 4, bucket, prefix, checkpointIntervalMs: checkpointMs });
    await engine.start();
    const t0 = Date.now();
    let committed = 0;
    await sleep(500);
    await poll(async () => (committed = await bucketBytes(kit, bucket, prefix)) >= bytes, { until: t0 + Math.max(300_000, (events / 2000) * 1000), intervalMs: 500 });
    const s = (Date.now() - t0) / 1000;
    if (committed < bytes) throw new Error(`engine: only ${committed}/${bytes} bytes committed after ${s.toFixed(0)} s`);
    const count = await countBucket(kit.s3, bucket, prefix, seq);
    console.log(`engine: recount ${count.distinct} distinct, ${count.duplicates} duplicates, ${count.missing} missing, ${count.objects} objects`);
    if (count.duplicates || count.missing || count.foreign) throw new Error('engine: not exactly once; no result');
    const h = await engine.health();
    const rate = events / s;
    console.log(`engine: ${events} events committed exactly once in ${s.toFixed(1)} s = ${Math.round(rate)} events/s (${h.completedCheckpoints} checkpoints of ${checkpointMs} ms)`);
    return rate;
  } finally {
    await engine.stop().catch(() => undefined);
  }
}

export async function main(args: string[]): Promise<void> {
  const o = optionsOrUsage(parseEngineOptions, args, USAGE);
  if (!o || !takeRigLock('engine')) return;
  const { events, checkpointMs } = o;
  const kit = rigKit();
  const runId = String(Date.now());
  try {
    const base = await baseline(kit, runId, events);
    const eng = await engineRun(kit, runId, events, checkpointMs);
    console.log(`RESULT engine events_per_s=${Math.round(eng)} ratio_vs_baseline=${(eng / base).toFixed(3)}`);
  } finally {
    await kit.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
