/**
 * MUTANT abort-on-unknown: an unknown outcome is taken as failure; the upload is aborted and
 * the handle counted as done, so the records are never committed. NoSuchUpload is taken as
 * "nothing to do", without checking.
 */
import { AbortMultipartUploadCommand } from '@aws-sdk/client-s3';
import type { SeamsFactory } from './seams.ts';

export const abortOnUnknown: SeamsFactory = () => ({
  async onNoSuchUpload() {},
  async onUnknownOutcome(sink, h, error) {
    sink.log(`clink sink mutant abort-on-unknown: giving up ${h.key} after ${error}`);
    await sink.send(new AbortMultipartUploadCommand({ Bucket: sink.bucket, Key: h.key, UploadId: h.uploadId })).catch(() => undefined);
  },
});
