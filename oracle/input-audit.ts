/**
 * The input audit: reads the input topic back in full, after the run, and reports what is
 * wrong with the input itself, apart from anything the engine did. For each partition p,
 * the record at offset o must be the canonical line of event (p, seq = o):
 *
 *   duplicates  a record whose (p, seq) already appeared earlier in the partition
 *   holes       sequences below the partition's highest seq that never appeared
 *   mismatched  a record that is not a generated event of this seed and partition
 *               (foreign, garbage, or an event of another partition)
 *   misplaced   a valid event whose seq differs from its offset (the producer's invariant)
 *
 * A clean input has all four at zero and exactly endOffset[p] records in each partition.
 */
import { Admin, Consumer, stringDeserializers, MessagesStreamModes } from '@platformatic/kafka';
import { GrowableBitset } from './bitset.ts';
import { Generator, judgeLine, type GeneratorSpec } from './generator.ts';
import { endOffsets } from './producer.ts';

export interface InputAuditOptions extends GeneratorSpec {
  bootstrap: string | string[];
  topic: string;
  /** Give up after this long. Default 10 min. */
  timeoutMs?: number;
}

export interface PartitionAudit {
  partition: number;
  records: number;
  endOffset: number;
  duplicates: number;
  holes: number;
  mismatched: number;
  misplaced: number;
}

export interface InputAudit {
  topic: string;
  records: number;
  duplicates: number;
  holes: number;
  mismatched: number;
  misplaced: number;
  perPartition: PartitionAudit[];
  /** First few findings, for people. */
  findings: string[];
  clean: boolean;
}

export async function auditInput(o: InputAuditOptions): Promise<InputAudit> {
  const bootstrapBrokers = (Array.isArray(o.bootstrap) ? o.bootstrap : o.bootstrap.split(',')).map((s) => s.trim()).filter(Boolean);
  const gen = new Generator(o);
  const admin = new Admin({ clientId: 'clink-qual-audit-admin', bootstrapBrokers });
  let ends: number[];
  try {
    ends = await endOffsets(admin, o.topic, o.partitions);
  } finally {
    await admin.close();
  }
  const per: PartitionAudit[] = ends.map((endOffset, partition) => ({ partition, records: 0, endOffset, duplicates: 0, holes: 0, mismatched: 0, misplaced: 0 }));
  const seen = ends.map(() => new GrowableBitset());
  const findings: string[] = [];
  const note = (s: string) => {
    if (findings.length < 50) findings.push(s);
  };
  const total = ends.reduce((a, b) => a + b, 0);
  if (total > 0) {
    const consumer = new Consumer({
      clientId: 'clink-qual-audit',
      groupId: `clink-qual-audit-${process.pid}-${Date.now()}`,
      bootstrapBrokers,
      deserializers: stringDeserializers,
      maxWaitTime: 500,
    });
    try {
      const stream = await consumer.consume({
        topics: [o.topic],
        mode: MessagesStreamModes.MANUAL,
        offsets: ends.map((_, partition) => ({ topic: o.topic, partition, offset: 0n })),
        autocommit: false,
      });
      let read = 0;
      const timer = setTimeout(() => stream.destroy(new Error(`input audit: read ${read} of ${total} records before the ${Math.round((o.timeoutMs ?? 600_000) / 1000)} s deadline`)), o.timeoutMs ?? 600_000);
      try {
        for await (const m of stream) {
          const p = m.partition;
          const offset = Number(m.offset);
          if (p >= o.partitions || offset >= ends[p]!) continue;
          read++;
          const a = per[p]!;
          a.records++;
          const v = judgeLine(gen, String(m.value ?? ''));
          if (v.kind !== 'event' || v.p !== p) {
            a.mismatched++;
            note(`partition ${p} offset ${offset}: not a generated event of this partition`);
          } else {
            if (v.seq !== offset) {
              a.misplaced++;
              note(`partition ${p} offset ${offset}: holds seq ${v.seq}`);
            }
            if (!seen[p]!.testAndSet(v.seq)) {
              a.duplicates++;
              note(`partition ${p} offset ${offset}: seq ${v.seq} again`);
            }
          }
          if (read >= total) break;
        }
      } finally {
        clearTimeout(timer);
        stream.destroy();
      }
    } finally {
      await consumer.close(true).catch(() => {});
    }
  }
  for (const a of per) {
    const bits = seen[a.partition]!;
    const h = bits.highest;
    a.holes = h + 1 - bits.countRange(0, h + 1);
    if (a.holes) note(`partition ${a.partition}: ${a.holes} sequence(s) missing below ${h}`);
    if (a.records !== a.endOffset) note(`partition ${a.partition}: read ${a.records} records, end offset ${a.endOffset}`);
  }
  const sum = (k: 'records' | 'duplicates' | 'holes' | 'mismatched' | 'misplaced') => per.reduce((x, a) => x + a[k], 0);
  const res: InputAudit = {
    topic: o.topic,
    records: sum('records'),
    duplicates: sum('duplicates'),
    holes: sum('holes'),
    mismatched: sum('mismatched'),
    misplaced: sum('misplaced'),
    perPartition: per,
    findings,
    clean: false,
  };
  res.clean = res.duplicates === 0 && res.holes === 0 && res.mismatched === 0 && res.misplaced === 0 && per.every((a) => a.records === a.endOffset);
  return res;
}
