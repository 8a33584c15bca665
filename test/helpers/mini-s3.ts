/**
 * A small in-process fake of the store for the s3_2pc_sink's unit tests (pure protocol
 * logic; test/rig/sink-*.test.ts run the same paths on MinIO): multipart uploads, ListParts,
 * CompleteMultipartUpload (second one → NoSuchUpload) and HeadObject, with hooks to hold an
 * operation in flight:
 *  - `gate`: UploadPart waits for it (to interleave a write with an upload in flight);
 *  - `holdComplete`: a CompleteMultipartUpload whose key matches waits until `releaseComplete()`
 *    (a completion in flight when a fault point fires); `completing` lists the keys sent.
 */
import { createHash } from 'node:crypto';

const md5 = (b: Buffer): string => createHash('md5').update(b).digest('hex');
const s3err = (name: string, status: number): Error => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });

export class MiniS3 {
  objects = new Map<string, { body: Buffer; etag: string; metadata: Record<string, string> }>();
  uploads = new Map<string, { key: string; metadata: Record<string, string>; parts: Map<number, { body: Buffer; etag: string }> }>();
  /** When set, UploadPart waits for it. */
  gate: Promise<void> | null = null;
  failUploadPart = 0;
  /** When set, a completion of a matching key waits for releaseComplete(). */
  holdComplete: RegExp | null = null;
  releaseComplete: () => void = () => undefined;
  /** The keys of every CompleteMultipartUpload received, in order. */
  completing: string[] = [];
  #id = 1;

  async send(command: { constructor: { name: string }; input: Record<string, any> }): Promise<any> {
    const cmd = command.constructor.name.replace(/Command$/, '');
    const i = command.input;
    switch (cmd) {
      case 'CreateMultipartUpload': {
        const id = `u${this.#id++}`;
        this.uploads.set(id, { key: i.Key, metadata: { ...(i.Metadata ?? {}) }, parts: new Map() });
        return { UploadId: id };
      }
      case 'UploadPart': {
        if (this.gate) await this.gate;
        if (this.failUploadPart > 0) {
          this.failUploadPart--;
          throw s3err('AccessDenied', 403);
        }
        const u = this.uploads.get(i.UploadId);
        if (!u) throw s3err('NoSuchUpload', 404);
        const body = Buffer.from(i.Body);
        u.parts.set(i.PartNumber, { body, etag: md5(body) });
        return { ETag: `"${md5(body)}"` };
      }
      case 'ListParts': {
        const u = this.uploads.get(i.UploadId);
        if (!u) throw s3err('NoSuchUpload', 404);
        return { Parts: [...u.parts].map(([n, p]) => ({ PartNumber: n, ETag: `"${p.etag}"` })), IsTruncated: false };
      }
      case 'CompleteMultipartUpload': {
        this.completing.push(i.Key);
        if (this.holdComplete?.test(i.Key)) await new Promise<void>((r) => (this.releaseComplete = r));
        const u = this.uploads.get(i.UploadId);
        if (!u) throw s3err('NoSuchUpload', 404);
        const parts = (i.MultipartUpload.Parts as { PartNumber: number }[]).map((p) => u.parts.get(p.PartNumber)!);
        const etag = `${md5(Buffer.concat(parts.map((p) => Buffer.from(p.etag, 'hex'))))}-${parts.length}`;
        this.objects.set(i.Key, { body: Buffer.concat(parts.map((p) => p.body)), etag, metadata: u.metadata });
        this.uploads.delete(i.UploadId);
        return { ETag: `"${etag}"` };
      }
      case 'HeadObject': {
        const o = this.objects.get(i.Key);
        if (!o) throw s3err('NotFound', 404);
        return { ETag: `"${o.etag}"`, ContentLength: o.body.length, Metadata: o.metadata };
      }
      default:
        throw new Error(`mini store: unsupported ${cmd}`);
    }
  }
}
