/** Shared set-up for the oracle's integration tests: a bucket of their own on the real store. */
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { testEndpoints } from '../helpers/endpoints.ts';
import { Generator } from '../../oracle/generator.ts';
import type { StoreSettings } from '../../oracle/store.ts';

export const SPEC = { seed: 'oracle-test-seed', partitions: 3, keys: 1000 };
export const gen = new Generator(SPEC);

export function storeSettings(extra: Partial<StoreSettings> = {}): StoreSettings {
  const e = testEndpoints();
  return { endpoint: e.s3.endpoint, region: e.s3.region, accessKeyId: e.s3.accessKeyId, secretAccessKey: e.s3.secretAccessKey, ...extra };
}

export function s3(): S3Client {
  const e = testEndpoints();
  return new S3Client({ endpoint: e.s3.endpoint, region: e.s3.region, forcePathStyle: true, credentials: { accessKeyId: e.s3.accessKeyId, secretAccessKey: e.s3.secretAccessKey } });
}

export async function makeBucket(client: S3Client, name: string): Promise<void> {
  await client.send(new CreateBucketCommand({ Bucket: name }));
}

export async function dropBucket(client: S3Client, name: string): Promise<void> {
  for (;;) {
    const l = await client.send(new ListObjectsV2Command({ Bucket: name }));
    for (const o of l.Contents ?? []) await client.send(new DeleteObjectCommand({ Bucket: name, Key: o.Key! }));
    if (!l.IsTruncated) break;
  }
  await client.send(new DeleteBucketCommand({ Bucket: name }));
}

export async function put(client: S3Client, bucket: string, key: string, body: string | Buffer): Promise<void> {
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}

export async function del(client: S3Client, bucket: string, key: string): Promise<void> {
  await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
}

/** JSON Lines of events (p, from..to-1), newline-terminated. */
export function lines(p: number, from: number, to: number, skip: number[] = []): string {
  let s = '';
  for (let seq = from; seq < to; seq++) if (!skip.includes(seq)) s += gen.line(p, seq) + '\n';
  return s;
}

/** A clean dataset: per partition `n` events, in objects of `per` events. Returns what to put. */
export function cleanObjects(prefix: string, n: number, per: number): { key: string; body: string }[] {
  const out: { key: string; body: string }[] = [];
  for (let p = 0; p < SPEC.partitions; p++) for (let from = 0; from < n; from += per) out.push({ key: `${prefix}p${p}/${String(from).padStart(8, '0')}.jsonl`, body: lines(p, from, Math.min(n, from + per)) });
  return out;
}

export const ZERO = { duplicates: 0, gaps: 0, foreign: 0, corrupted: 0, mutations: 0, pastProduced: 0 };
