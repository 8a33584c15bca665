/**
 * The numbers a Flink restore resumes from, found in ZooKeeper HA's completed-checkpoint
 * handle (ha/<cluster>/completedCheckpoint*): a Java-serialised CompletedCheckpoint whose
 * small operator states are inline (ByteStreamStateHandle.data). A JobManager that starts
 * again reads this file, not the checkpoint's _metadata, and hands each source reader the
 * Kafka split it holds; the reader fetches from the split's starting offset.
 *
 * The Kafka connector writes a split as KafkaPartitionSplitSerializer does (version 0):
 * writeUTF(topic), writeInt(partition), writeLong(startingOffset), writeLong(stoppingOffset),
 * an unbounded source's stopping offset being Long.MIN_VALUE. Those bytes appear twice over
 * in a handle: the enumerator's copy (every split it assigned, at its first offset, -2 for
 * "earliest") and each reader's copy at the offset it has reached. A restore resumes from
 * the readers' copies, so only splits whose starting offset is a real offset (≥ 0) are
 * returned. Nothing in the handle checks these bytes: Java serialisation checks the
 * structure, not the data of a byte array.
 */
import type { RestoreNumber } from '../engine.ts';

/** Long.MIN_VALUE as big-endian bytes: KafkaPartitionSplit.NO_STOPPING_OFFSET. */
const NO_STOPPING_OFFSET = Buffer.from('8000000000000000', 'hex');

/** A Kafka split as serialised in the handle: where it starts, and what it says. */
export interface SerialisedKafkaSplit {
  /** The byte offset of the split's topic length (writeUTF's two bytes). */
  at: number;
  partition: number;
  startingOffset: bigint;
  /** The byte offset of the starting offset's lowest byte. */
  lowestByte: number;
}

/** Every serialised Kafka split of this topic in the content, in the order they appear. */
export function kafkaSplits(content: Buffer, topic: string): SerialisedKafkaSplit[] {
  const name = Buffer.from(topic, 'utf8');
  if (name.length === 0 || name.length > 0xffff) return [];
  const utf = Buffer.concat([Buffer.from([name.length >> 8, name.length & 0xff]), name]);
  const out: SerialisedKafkaSplit[] = [];
  for (let at = content.indexOf(utf); at >= 0; at = content.indexOf(utf, at + 1)) {
    const p = at + utf.length;
    if (p + 20 > content.length) break;
    if (!content.subarray(p + 12, p + 20).equals(NO_STOPPING_OFFSET)) continue;
    const partition = content.readInt32BE(p);
    if (partition < 0) continue;
    out.push({ at, partition, startingOffset: content.readBigInt64BE(p + 4), lowestByte: p + 11 });
  }
  return out;
}

/**
 * The source readers' Kafka offsets in an HA completed-checkpoint handle: the splits of the
 * topic whose starting offset is a real offset (≥ 0; the enumerator's copies say -2).
 */
export function readerOffsets(content: Buffer, topic: string): RestoreNumber[] {
  return kafkaSplits(content, topic)
    .filter((s) => s.startingOffset >= 0n)
    .map((s) => ({ offset: s.lowestByte, what: `a source reader's Kafka offset of ${topic} partition ${s.partition}: ${s.startingOffset}` }));
}
