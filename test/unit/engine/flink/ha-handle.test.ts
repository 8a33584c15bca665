/**
 * Flink's HA completed-checkpoint handle (engine/flink/ha-handle.ts): the Kafka splits in it,
 * on two handles a Flink 2.2 JobManager wrote on the rig (flink-quick at fdc7b89, topic
 * cq-flink-quick-20261205T144221-ce9a, 4 partitions; chk-1 before any event was read, chk-6
 * about 5,000 events into each partition) and on bytes written here as the connector's
 * KafkaPartitionSplitSerializer writes them. The expected offsets were read from the files
 * apart, with Python's struct.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { kafkaSplits, readerOffsets } from '../../../../engine/flink/ha-handle.ts';

const TOPIC = 'cq-flink-quick-20261205T144221-ce9a';
const handle = (name: string) => readFileSync(new URL(`../../../fixtures/flink-ha-handle/${name}`, import.meta.url));

/** A split as KafkaPartitionSplitSerializer (version 0) writes it: writeUTF(topic), writeInt, writeLong, writeLong. */
function split(topic: string, partition: number, starting: bigint, stopping = -(2n ** 63n)): Buffer {
  const name = Buffer.from(topic);
  const b = Buffer.alloc(2 + name.length + 20);
  b.writeUInt16BE(name.length, 0);
  name.copy(b, 2);
  b.writeInt32BE(partition, 2 + name.length);
  b.writeBigInt64BE(starting, 6 + name.length);
  b.writeBigInt64BE(stopping, 14 + name.length);
  return b;
}

t.test("a handle of chk-6: the enumerator's four splits at -2, then each reader's at the offset it reached", async (t) => {
  const content = handle('completedCheckpoint-chk6');
  const splits = kafkaSplits(content, TOPIC);
  t.same(
    splits.map((s) => [s.at, s.partition, Number(s.startingOffset)]),
    [
      [1851, 0, -2],
      [1916, 1, -2],
      [1981, 3, -2],
      [2046, 2, -2],
      [3799, 3, 4985],
      [4725, 0, 4986],
      [5354, 1, 4981],
      [5983, 2, 4985],
    ],
  );
  const readers = readerOffsets(content, TOPIC);
  t.same(readers.map((r) => r.offset), [3847, 4773, 5402, 6031], "the readers' offsets' lowest bytes");
  t.match(readers[1]!.what, /partition 0: 4986$/);
  for (const r of readers) t.equal(content[r.offset], Number(splits.find((s) => s.lowestByte === r.offset)!.startingOffset & 0xffn), 'the byte named is the offset\'s lowest');
});

t.test('a handle of chk-1, before any event: no reader offset (a flip there would land on no number a restore resumes from)', async (t) => {
  const content = handle('completedCheckpoint-chk1');
  t.equal(kafkaSplits(content, TOPIC).length, 8);
  t.same(readerOffsets(content, TOPIC), []);
});

t.test('another topic, a bounded split and a cut-off tail are not read as splits', async (t) => {
  const content = Buffer.concat([
    Buffer.from('junk'),
    split('other-topic', 0, 50n),
    split('t1', 2, 1234n, 9999n),
    split('t1', 1, 77n),
    split('t1', 3, 88n).subarray(0, 12),
  ]);
  t.same(kafkaSplits(content, 't1').map((s) => [s.partition, Number(s.startingOffset)]), [[1, 77]]);
  const [r] = readerOffsets(content, 't1');
  t.equal(content[r!.offset], 77, 'the lowest byte of 77');
  t.same(readerOffsets(content, ''), []);
});
