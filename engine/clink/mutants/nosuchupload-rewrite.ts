/**
 * MUTANT nosuchupload-rewrite: NoSuchUpload is taken to mean the commit failed, so the
 * covered records are written again as a new object (bytes fetched back from the object
 * the first completion made visible).
 */
import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { SeamsFactory } from './seams.ts';

interface BodyLike {
  transformToByteArray(): Promise<Uint8Array>;
}

export const nosuchuploadRewrite: SeamsFactory = () => {
  let rewriteCounter = 0;
  return {
    async onNoSuchUpload(sink, h) {
      const got = await sink.sendRetried(`mutant-get key=${h.key}`, () => new GetObjectCommand({ Bucket: sink.bucket, Key: h.key }));
      const body = Buffer.from(await (got.Body as BodyLike).transformToByteArray());
      const key = `${h.key.replace(/\.jsonl$/, '')}-rewrite-${++rewriteCounter}-${randomBytes(3).toString('hex')}.jsonl`;
      sink.log(`clink sink mutant nosuchupload-rewrite: rewriting ${h.key} as ${key}`);
      await sink.sendRetried(
        `mutant-put key=${key}`,
        () => new PutObjectCommand({ Bucket: sink.bucket, Key: key, Body: body, ContentType: 'application/x-ndjson', Metadata: { 'clink-token': h.token } }),
      );
    },
  };
};
