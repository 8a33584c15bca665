/**
 * The S3 store on the store host: MinIO (the pinned community build), started as the
 * service `minio` with root credentials generated per rig (kept in a 0600 file on the
 * operations host, never printed) and MINIO_API_STALE_UPLOADS_EXPIRY=72h, so MinIO's own
 * sweeper cannot remove a pending multipart upload during any campaign (MinIO has no
 * AbortIncompleteMultipartUpload lifecycle rule; the default expiry is 24 h).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { QualError } from '../lib/errors.ts';
import { stateDir } from '../lib/paths.ts';
import { uploadFile } from './deploy.ts';
import { serviceLogTail, shQuote, startService, stopService, waitFor } from './process.ts';
import type { Remote } from './remote.ts';
import type { StoreCredentials, StoreEndpoint } from './types.ts';

export const STORE_PORT = 9000;
export const STORE_CONSOLE_PORT = 9001;
export const STORE_SERVICE = 'minio';
export const BUCKET = 'clink-qual';
export const STALE_UPLOADS_EXPIRY = '72h';

export function credentialsPath(): string {
  return path.join(stateDir(), 'store-credentials.json');
}

export function s3Client(store: StoreEndpoint, creds: StoreCredentials, timeoutMs = 10_000): S3Client {
  return new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: creds,
    maxAttempts: 1,
    requestHandler: { requestTimeout: timeoutMs, connectionTimeout: Math.min(timeoutMs, 3000) },
  });
}

/** GET /minio/health/live: true for 200, false otherwise (timeouts included). */
export async function storeLive(endpoint: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const r = await fetch(`${endpoint}/minio/health/live`, { signal: AbortSignal.timeout(timeoutMs) });
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}

export function minioPath(remote: Remote, version: string): string {
  return `${remote.host.dataDir}/opt/minio-${version}/minio`;
}

export async function startMinio(remote: Remote, version: string, creds: StoreCredentials): Promise<number> {
  const a = remote.host.address;
  const d = remote.host.dataDir;
  return startService(remote, {
    name: STORE_SERVICE,
    command: `${shQuote(minioPath(remote, version))} server ${shQuote(`${d}/minio-data`)} --address ${a}:${STORE_PORT} --console-address ${a}:${STORE_CONSOLE_PORT} --quiet`,
    env: {
      MINIO_ROOT_USER: creds.accessKeyId,
      MINIO_ROOT_PASSWORD: creds.secretAccessKey,
      MINIO_API_STALE_UPLOADS_EXPIRY: STALE_UPLOADS_EXPIRY,
      MINIO_UPDATE: 'off',
    },
    cwd: d,
  });
}

/** Uploads MinIO, starts it with fresh credentials and empty data, creates the bucket. */
export async function deployStore(remote: Remote, binary: string, version: string, log: (l: string) => void): Promise<{ endpoint: StoreEndpoint; credentials: StoreCredentials }> {
  const credentials: StoreCredentials = { accessKeyId: `cq${randomBytes(6).toString('hex')}`, secretAccessKey: randomBytes(24).toString('base64url') };
  writeFileSync(credentialsPath(), JSON.stringify(credentials) + '\n', { mode: 0o600 });
  await stopService(remote, STORE_SERVICE);
  const copied = await uploadFile(remote, binary, minioPath(remote, version), 0o755);
  log(`${remote.host.name}: minio binary ${copied ? 'copied' : 'unchanged'}`);
  await remote.exec(`rm -rf ${shQuote(`${remote.host.dataDir}/minio-data`)} && mkdir -p ${shQuote(`${remote.host.dataDir}/minio-data`)}`);
  await startMinio(remote, version, credentials);
  const endpoint: StoreEndpoint = {
    endpoint: `http://${remote.host.address}:${STORE_PORT}`,
    region: 'us-east-1',
    bucket: BUCKET,
    credentialsFile: credentialsPath(),
    host: remote.host.name,
    version,
  };
  await waitStoreReady(remote, endpoint);
  const s3 = s3Client(endpoint, credentials);
  try {
    await waitFor(
      `bucket ${BUCKET} on ${remote.host.name}`,
      async () => {
        try {
          await s3.send(new CreateBucketCommand({ Bucket: BUCKET }), { abortSignal: AbortSignal.timeout(5000) });
        } catch (err) {
          const name = (err as Error).name;
          if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
        }
        await s3.send(new HeadBucketCommand({ Bucket: BUCKET }), { abortSignal: AbortSignal.timeout(5000) });
        return true;
      },
      30_000,
      500,
    );
  } finally {
    s3.destroy();
  }
  return { endpoint, credentials };
}

export async function waitStoreReady(remote: Remote, endpoint: StoreEndpoint, timeoutMs = 60_000): Promise<void> {
  try {
    await waitFor(`MinIO on ${remote.host.name} (${endpoint.endpoint}/minio/health/live)`, () => storeLive(endpoint.endpoint), timeoutMs, 250);
  } catch (err) {
    throw new QualError('READINESS_TIMEOUT', `${(err as Error).message}\n--- ${remote.host.name} minio out.log ---\n${await serviceLogTail(remote, STORE_SERVICE, 20).catch(() => '')}`);
  }
}

export interface StoreHealth {
  healthy: boolean;
  bucketPresent: boolean;
  error?: string;
}

export async function storeHealth(endpoint: StoreEndpoint, creds: StoreCredentials | null): Promise<StoreHealth> {
  const healthy = await storeLive(endpoint.endpoint);
  if (!healthy) return { healthy, bucketPresent: false, error: 'health/live did not answer 200' };
  if (!creds) return { healthy, bucketPresent: false, error: 'no credentials file' };
  const s3 = s3Client(endpoint, creds, 5000);
  try {
    await s3.send(new HeadBucketCommand({ Bucket: endpoint.bucket }), { abortSignal: AbortSignal.timeout(5000) });
    return { healthy, bucketPresent: true };
  } catch (err) {
    return { healthy, bucketPresent: false, error: (err as Error).name };
  } finally {
    s3.destroy();
  }
}
