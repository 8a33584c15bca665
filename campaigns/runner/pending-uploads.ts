/**
 * Multipart uploads left pending at the end of a run, counted from the engine's own
 * journal of (key, uploadId): MinIO lists pending uploads only for an exact object name
 * (with an empty prefix it answers from a cache that a restart empties), so each
 * journaled key is listed exactly. Pending uploads are invisible to any reader; the report
 * counts them as evidence, not as defects.
 */
import { ListMultipartUploadsCommand, S3Client, type ListMultipartUploadsCommandOutput } from '@aws-sdk/client-s3';
import type { StoreCredentials } from '../../rig/types.ts';

export async function countPendingUploads(
  store: { endpoint: string; region: string; bucket: string },
  credentials: StoreCredentials,
  started: { key: string; uploadId: string }[],
): Promise<{ pending: number; checkedKeys: number; errors: number }> {
  const s3 = new S3Client({ endpoint: store.endpoint, region: store.region, forcePathStyle: true, credentials, maxAttempts: 3 });
  const byKey = new Map<string, Set<string>>();
  for (const u of started) {
    let s = byKey.get(u.key);
    if (!s) byKey.set(u.key, (s = new Set()));
    s.add(u.uploadId);
  }
  let pending = 0;
  let errors = 0;
  const keys = [...byKey.keys()];
  const worker = async () => {
    for (let k = keys.pop(); k !== undefined; k = keys.pop()) {
      try {
        let keyMarker: string | undefined;
        let uploadIdMarker: string | undefined;
        do {
          const r: ListMultipartUploadsCommandOutput = await s3.send(new ListMultipartUploadsCommand({ Bucket: store.bucket, Prefix: k, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }));
          for (const u of r.Uploads ?? []) if (u.Key === k && u.UploadId && byKey.get(k)!.has(u.UploadId)) pending++;
          keyMarker = r.IsTruncated ? r.NextKeyMarker : undefined;
          uploadIdMarker = r.IsTruncated ? r.NextUploadIdMarker : undefined;
        } while (keyMarker);
      } catch {
        errors++;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: 8 }, worker));
  } finally {
    s3.destroy();
  }
  return { pending, checkedKeys: byKey.size, errors };
}
