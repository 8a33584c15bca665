/**
 * Probes the chaos layer uses as landing and healing evidence, run from the operations
 * host: an S3 request against the store with a short timeout, a TCP connect.
 */
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import net from 'node:net';
import type { RigState, StoreCredentials } from '../rig/types.ts';

export interface ProbeResult {
  ok: boolean;
  ms: number;
  error?: string;
}

/** One HeadBucket with a hard timeout: does the store answer? */
export async function probeStore(rig: RigState, credentials: StoreCredentials, timeoutMs = 2000): Promise<ProbeResult> {
  const s3 = new S3Client({
    endpoint: rig.store.endpoint,
    region: rig.store.region,
    forcePathStyle: true,
    credentials,
    maxAttempts: 1,
    requestHandler: { requestTimeout: timeoutMs, connectionTimeout: timeoutMs },
  });
  const t0 = Date.now();
  const abort = AbortSignal.timeout(timeoutMs + 500);
  try {
    await s3.send(new HeadBucketCommand({ Bucket: rig.store.bucket }), { abortSignal: abort });
    return { ok: true, ms: Date.now() - t0 };
  } catch (err) {
    return { ok: false, ms: Date.now() - t0, error: (err as Error).name || String(err) };
  } finally {
    s3.destroy();
  }
}

/** A TCP connect from the operations host. */
export function probeTcp(host: string, port: number, timeoutMs = 2000): Promise<ProbeResult> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const done = (r: ProbeResult) => {
      sock.destroy();
      resolve(r);
    };
    sock.setTimeout(timeoutMs, () => done({ ok: false, ms: Date.now() - t0, error: 'timeout' }));
    sock.once('connect', () => done({ ok: true, ms: Date.now() - t0 }));
    sock.once('error', (e) => done({ ok: false, ms: Date.now() - t0, error: (e as NodeJS.ErrnoException).code ?? e.message }));
  });
}
