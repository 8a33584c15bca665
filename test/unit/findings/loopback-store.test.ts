import t from 'tap';
import { createBucketWhenUp, minioDriveDirs, minioServerArgs, seaweedfsServerArgs, type LoopbackStoreOptions } from '../../../findings/loopback-store.ts';

const base: LoopbackStoreOptions = { store: 'minio', bin: '/bin/minio', dir: '/tmp/x', port: 19900, user: 'u', pass: 'p' };

t.test('MinIO: one drive is dir/data; an erasure set is d1..dN, given to MinIO as d{1...N}', async (t) => {
  t.same(minioDriveDirs('/tmp/x', 1), ['/tmp/x/data']);
  t.same(minioDriveDirs('/tmp/x', 4), ['/tmp/x/d1', '/tmp/x/d2', '/tmp/x/d3', '/tmp/x/d4']);
  t.same(minioServerArgs(base, true), ['server', '/tmp/x/data', '--address', '127.0.0.1:19900', '--console-address', '127.0.0.1:19901', '--quiet']);
  t.same(minioServerArgs({ ...base, drives: 4 }, false), ['server', '/tmp/x/d{1...4}', '--address', '127.0.0.1:19900', '--quiet'], 'no console address on a build without one');
});

t.test('SeaweedFS: all in one process on loopback, S3 on the port, the others above it', async (t) => {
  const args = seaweedfsServerArgs({ ...base, store: 'seaweedfs', bin: '/bin/weed' });
  t.same(args, ['server', '-dir=/tmp/x/weed', '-ip=127.0.0.1', '-ip.bind=127.0.0.1', '-master.port=19902', '-volume.port=19903', '-filer.port=19904', '-s3', '-s3.port=19900', '-s3.config=/tmp/x/s3.json']);
});

t.test('the bucket is created once the store answers; already owning it is success; a store that never answers gives up', async (t) => {
  const client = (answers: (string | null)[]) => {
    let calls = 0;
    return {
      get calls() {
        return calls;
      },
      send: async () => {
        const a = answers[Math.min(calls++, answers.length - 1)];
        if (a) throw Object.assign(new Error(a), { name: a });
        return {};
      },
    };
  };
  const starting = client(['ECONNREFUSED', 'ECONNREFUSED', null]);
  t.equal(await createBucketWhenUp(starting as never, 'b', 10, 1), true);
  t.equal(starting.calls, 3, 'retried until the store answered');
  const owned = client(['BucketAlreadyOwnedByYou']);
  t.equal(await createBucketWhenUp(owned as never, 'b', 10, 1), true);
  t.equal(owned.calls, 1);
  const down = client(['ECONNREFUSED']);
  t.equal(await createBucketWhenUp(down as never, 'b', 5, 1), false);
  t.equal(down.calls, 5, 'tried as many times as allowed');
});
