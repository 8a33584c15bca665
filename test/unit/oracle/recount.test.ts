/**
 * oracle/recount.ts without a rig, against a loopback HTTP server that speaks the two calls
 * the recount makes (ListObjectsV2, paginated three keys a page, and GET): a bucket with
 * duplicates, a missing tail, a foreign line and a zero-byte object gives the counters the
 * definitions say (oracle/tally.ts), the same whether the lines are judged on the recount's
 * thread, in one judge worker or in two, and the same as a tally fed the objects directly.
 * The listing is pipelined: a later page is held back until a GET has come (10 s at most), and
 * the GETs of the first page's objects do come before it.
 * A hidden staging file (oracle/store.ts isHiddenKey) among the pages is counted, not judged.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Generator } from '../../../oracle/generator.ts';
import { recount } from '../../../oracle/recount.ts';
import { EventTally } from '../../../oracle/tally.ts';

const spec = { seed: 'recount-unit', partitions: 2, keys: 10 };
const gen = new Generator(spec);
const lines = (p: number, from: number, to: number) => Array.from({ length: to - from }, (_, i) => gen.line(p, from + i) + '\n').join('');
const objects = new Map<string, Buffer>([
  ['out/p0-a', Buffer.from(lines(0, 0, 10))],
  ['out/p0-b', Buffer.from(lines(0, 10, 20))],
  ['out/p1-a', Buffer.from(lines(1, 0, 10))],
  ['out/p1-b', Buffer.from(lines(1, 5, 15))], // 5 duplicates
  ['out/p1-c', Buffer.from('{"id":"1-99","p":1,"seq":99,"key":"k00000","payload":"nope"}\n')], // foreign
  ['out/p1-d', Buffer.alloc(0)], // zero bytes: corrupted
  ['out/p1-e', Buffer.from(lines(1, 15, 16))],
  ['out/_p1-f_tmp_0', Buffer.from(lines(1, 0, 3))], // hidden: a writer's staging file, never judged
]);
const produced = [25, 16]; // p0: 20..24 never committed, a missing tail of 5
const keys = [...objects.keys()].sort();
const PAGE = 3;
let listCalls = 0;
let getCalls = 0;
/** Later pages answered after a GET had come (the GETs did not wait for the whole listing). */
let pagesAfterAGet = 0;
let getCame: (() => void) | undefined;

const server = http.createServer(async (req, res) => {
  req.resume();
  const url = new URL(req.url!, 'http://x');
  if (url.searchParams.get('list-type') === '2') {
    listCalls++;
    const from = Number(url.searchParams.get('continuation-token') ?? '0');
    if (from > 0) {
      await new Promise<void>((r) => {
        const timer = setTimeout(r, 10_000);
        getCame = () => {
          clearTimeout(timer);
          r();
        };
        if (getCalls > 0) getCame();
      });
      getCame = undefined;
      if (getCalls > 0) pagesAfterAGet++;
    }
    const page = keys.slice(from, from + PAGE);
    const more = from + PAGE < keys.length;
    const contents = page.map((k) => `<Contents><Key>${k}</Key><ETag>"etag-${k}"</ETag><Size>${objects.get(k)!.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`).join('');
    res.writeHead(200, { 'content-type': 'application/xml' });
    res.end(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>out/</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>${more}</IsTruncated>${more ? `<NextContinuationToken>${from + PAGE}</NextContinuationToken>` : ''}${contents}</ListBucketResult>`);
    return;
  }
  getCalls++;
  getCame?.();
  const key = decodeURIComponent(url.pathname.replace(/^\/b\//, ''));
  const body = objects.get(key);
  if (!body) {
    res.writeHead(404);
    res.end('<Error><Code>NoSuchKey</Code><Message>no</Message></Error>');
    return;
  }
  res.writeHead(200, { etag: `"etag-${key}"`, 'content-length': String(body.length) });
  res.end(body);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
t.teardown(() => server.close());
const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const visible = keys.filter((k) => !k.startsWith('out/_'));
const direct = new EventTally(gen);
for (const k of visible) direct.addObject(k, objects.get(k)!);

for (const judgeWorkers of [0, 1, 2]) {
  t.test(`${judgeWorkers} judge worker(s): the counters of the definitions`, async (t) => {
    const before = listCalls;
    getCalls = 0;
    pagesAfterAGet = 0;
    const progress: [number, number][] = [];
    const r = await recount({
      settings: { ...spec, bucket: 'b', prefix: 'out/', endpoint, region: 'us-east-1' },
      credentials: { accessKeyId: 'k', secretAccessKey: 's' },
      produced,
      concurrency: 2,
      judgeWorkers,
      onProgress: (d, l) => progress.push([d, l]),
    });
    t.equal(listCalls - before, Math.ceil(keys.length / PAGE), 'every page listed once');
    t.equal(pagesAfterAGet, Math.ceil(keys.length / PAGE) - 1, 'pipelined: the first GETs came before the later pages were answered');
    t.strictSame(r.recount.counters, { duplicates: 5, gaps: 5, foreign: 1, corrupted: 1, mutations: 0, pastProduced: 0 });
    t.strictSame(r.recount.counters, direct.counters(produced, { settled: true }), 'the same as the tally fed directly');
    t.equal(r.recount.objects, visible.length, 'objects judged');
    t.equal(r.recount.hiddenObjects, 1, 'the hidden staging file counted, not judged');
    t.equal(r.recount.distinctEvents, 20 + 16, 'distinct events');
    t.equal(r.recount.lines, direct.lines, 'lines');
    t.equal(r.recount.bytes, direct.bytes, 'bytes');
    t.equal(progress.length, visible.length, 'progress after each object');
    t.strictSame(progress.at(-1), [visible.length, visible.length]);
    // Which of the two overlapping objects is judged second (and so holds the duplicates) is the GETs' order.
    t.ok(r.findings.some((f) => /out\/p1-[ab]: 5 duplicate/.test(f)), 'the duplicates found');
    t.ok(r.findings.some((f) => /out\/p1-d: zero bytes/.test(f)), 'the zero-byte object found');
  });
}
