/**
 * The S3 store on the store host: MinIO (the pinned community build), started as the
 * service `minio` with root credentials generated per rig (kept in a 0600 file on the
 * operations host, never printed) and MINIO_API_STALE_UPLOADS_EXPIRY=72h, so MinIO's own
 * sweeper cannot remove a pending multipart upload during any campaign (MinIO has no
 * AbortIncompleteMultipartUpload lifecycle rule; the default expiry is 24 h).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
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
/**
 * The store's data directory under the store host's dataDir. It outlives `rig down` (only
 * `rig down --purge` removes it, with the credentials that open it), so a stored run can be
 * re-verified against its bucket after the next `rig up`.
 */
export const STORE_DATA_DIR = 'minio-data';

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
    command: `${shQuote(minioPath(remote, version))} server ${shQuote(`${d}/${STORE_DATA_DIR}`)} --address ${a}:${STORE_PORT} --console-address ${a}:${STORE_CONSOLE_PORT} --quiet`,
    env: {
      MINIO_ROOT_USER: creds.accessKeyId,
      MINIO_ROOT_PASSWORD: creds.secretAccessKey,
      MINIO_API_STALE_UPLOADS_EXPIRY: STALE_UPLOADS_EXPIRY,
      MINIO_UPDATE: 'off',
    },
    cwd: d,
  });
}

/** The credentials an earlier rig kept (its data is still there, opened by them), or undefined. */
function keptCredentials(): StoreCredentials | undefined {
  try {
    const c = JSON.parse(readFileSync(credentialsPath(), 'utf8')) as Partial<StoreCredentials>;
    return typeof c.accessKeyId === 'string' && typeof c.secretAccessKey === 'string' ? { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Uploads MinIO and starts it on the data an earlier rig left (kept across `rig down`, with
 * the credentials that open it; fresh ones when there are none), and creates the bucket
 * unless it is there already.
 */
export async function deployStore(remote: Remote, binary: string, version: string, log: (l: string) => void): Promise<{ endpoint: StoreEndpoint; credentials: StoreCredentials }> {
  const kept = keptCredentials();
  const credentials: StoreCredentials = kept ?? { accessKeyId: `cq${randomBytes(6).toString('hex')}`, secretAccessKey: randomBytes(24).toString('base64url') };
  if (!kept) writeFileSync(credentialsPath(), JSON.stringify(credentials) + '\n', { mode: 0o600 });
  log(`${remote.host.name}: store data in ${STORE_DATA_DIR}/ (kept across rig down), ${kept ? "the earlier rig's credentials" : 'fresh credentials'}`);
  await stopService(remote, STORE_SERVICE);
  const copied = await uploadFile(remote, binary, minioPath(remote, version), 0o755);
  log(`${remote.host.name}: minio binary ${copied ? 'copied' : 'unchanged'}`);
  await remote.exec(`mkdir -p ${shQuote(`${remote.host.dataDir}/${STORE_DATA_DIR}`)}`);
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
