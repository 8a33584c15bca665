/**
 * The S3 store on the store host, one of two (the campaign's `store:`, rig.json's
 * store.kind), each started as its own service with root credentials generated per rig (kept
 * in a 0600 file on the operations host, never printed) and the bucket created the same way:
 *
 *   - minio: the pinned community build, as the service `minio`, with
 *     MINIO_API_STALE_UPLOADS_EXPIRY=72h, so MinIO's own sweeper cannot remove a pending
 *     multipart upload during any campaign (MinIO has no AbortIncompleteMultipartUpload
 *     lifecycle rule; the default expiry is 24 h);
 *   - seaweedfs: the pinned SeaweedFS build as the service `seaweedfs`: `weed server -s3`
 *     (master, volume server, filer and S3 gateway in one process, so a SIGSTOP stops all of
 *     them), the credentials in an identities file on the store host (0600).
 *
 * Each store keeps its data in its own directory, so switching stores leaves the other's
 * bucket where it was.
 *
 * MinIO runs on one of two drive layouts (the campaign's `store: { kind: minio, drives: N }`,
 * rig.json's store.drives): one drive (`minio server <dataDir>/minio-data`, MinIO's
 * single-drive mode: nothing can repair a rotten byte) or four drives erasure-coded
 * (`minio server <dataDir>/minio-data-d4/{1...4}`, MinIO's ellipsis syntax: one erasure set,
 * 2 data and 2 parity shards per block). Each layout keeps its own data directory, so
 * switching layouts leaves the other's bucket where it was, like switching stores. The four
 * drives of a rig are directories on the store host's one disk, which MinIO refuses as "part
 * of the root drive" outside its single-drive mode: MINIO_ROOTDRIVE_THRESHOLD_SIZE=1B turns
 * that check into "a drive of at most 1 byte is the root drive" (never), and nothing else.
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
import type { StoreCredentials, StoreEndpoint, StoreKind } from './types.ts';

export const STORE_PORT = 9000;
export const STORE_CONSOLE_PORT = 9001;
/** MinIO's drive layouts a campaign may choose: one drive, or four erasure-coded on the store host. */
export const MINIO_DRIVE_LAYOUTS = [1, 4] as const;
/** The environment a multi-drive MinIO needs on a rig whose drives share the host's root disk (see above). */
export const MINIO_MULTI_DRIVE_ENV: Readonly<Record<string, string>> = { MINIO_ROOTDRIVE_THRESHOLD_SIZE: '1B' };

/** SeaweedFS's inner servers on the store host (its S3 gateway answers on STORE_PORT). */
export const SEAWEEDFS_PORTS = { master: 9333, volume: 8080, filer: 8888 } as const;
/** The service each store runs as on the store host (rig/process.ts service folders). */
export const STORE_SERVICES: Readonly<Record<StoreKind, string>> = { minio: 'minio', seaweedfs: 'seaweedfs' };
/** MinIO's service: the store faults that work on MinIO's own files (store-bitrot) name it. */
export const MINIO_SERVICE = STORE_SERVICES.minio;
export const BUCKET = 'clink-qual';
export const STALE_UPLOADS_EXPIRY = '72h';
/**
 * Each store's data directory under the store host's dataDir. It outlives `rig down` (only
 * `rig down --purge` removes it, with the credentials that open it), so a stored run can be
 * re-verified against its bucket after the next `rig up` on the same store.
 */
export const STORE_DATA_DIRS: Readonly<Record<StoreKind, string>> = { minio: 'minio-data', seaweedfs: 'seaweedfs-data' };
/** The path a store answers 200 on when it is live: MinIO's liveness probe, SeaweedFS's S3 gateway's. */
export const STORE_HEALTH_PATHS: Readonly<Record<StoreKind, string>> = { minio: '/minio/health/live', seaweedfs: '/healthz' };
/** The install manifest's component of each store (rig/install.ts). */
export const STORE_COMPONENTS: Readonly<Record<StoreKind, string>> = { minio: 'minio', seaweedfs: 'seaweedfs' };

/**
 * MinIO's data directory for a drive layout, under the store host's dataDir: `minio-data`
 * for one drive (the directory every rig used before layouts could be chosen), `minio-data-d4`
 * holding the drives 1 … 4 for four.
 */
export function minioDataDir(drives: number): string {
  return drives === 1 ? STORE_DATA_DIRS.minio : `${STORE_DATA_DIRS.minio}-d${drives}`;
}

/** The drive directories of a layout under the store host's dataDir (one, or minio-data-d4/1 … 4). */
export function minioDriveDirs(dataDir: string, drives: number): string[] {
  if (drives === 1) return [`${dataDir}/${minioDataDir(1)}`];
  return Array.from({ length: drives }, (_, i) => `${dataDir}/${minioDataDir(drives)}/${i + 1}`);
}

/** `minio server`'s data argument for a layout: the one directory, or MinIO's ellipsis over the drives (`…/minio-data-d4/{1...4}`). */
export function minioDataArg(dataDir: string, drives: number): string {
  return drives === 1 ? `${dataDir}/${minioDataDir(1)}` : `${dataDir}/${minioDataDir(drives)}/{1...${drives}}`;
}

/** The drives a rig's store runs on: rig.json's store.drives, 1 when absent (single drive, every rig.json before layouts). */
export function storeDrivesOf(store: Pick<StoreEndpoint, 'drives'>): number {
  return store.drives ?? 1;
}

/** A store and its layout in words: "minio (single drive)", "minio (erasure-coded, 4 drives)", "seaweedfs". */
export function describeStoreLayout(kind: StoreKind, drives = 1): string {
  if (kind !== 'minio') return kind;
  return drives > 1 ? `${kind} (erasure-coded, ${drives} drives)` : `${kind} (single drive)`;
}

/** The store a rig runs: rig.json's store.kind, MinIO for a rig.json written before there was a choice. */
export function storeKindOf(store: Pick<StoreEndpoint, 'kind'>): StoreKind {
  return store.kind ?? 'minio';
}

/** The service name of the store a rig runs. */
export function storeServiceOf(store: Pick<StoreEndpoint, 'kind'>): string {
  return STORE_SERVICES[storeKindOf(store)];
}

/** The store whose service this is, or undefined for any other service. */
export function storeKindOfService(service: string): StoreKind | undefined {
  return (Object.keys(STORE_SERVICES) as StoreKind[]).find((k) => STORE_SERVICES[k] === service);
}

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

/** GET the store's health path (STORE_HEALTH_PATHS): true for 200, false otherwise (timeouts included). */
export async function storeLive(endpoint: string, kind: StoreKind, timeoutMs = 2000): Promise<boolean> {
  try {
    const r = await fetch(`${endpoint}${STORE_HEALTH_PATHS[kind]}`, { signal: AbortSignal.timeout(timeoutMs) });
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}

/** Where a store's binary goes on the store host. */
export function storeBinaryPath(remote: Remote, kind: StoreKind, version: string): string {
  return kind === 'minio' ? `${remote.host.dataDir}/opt/minio-${version}/minio` : `${remote.host.dataDir}/opt/seaweedfs-${version}/weed`;
}

/** SeaweedFS's identities file on the store host: the one admin identity, with the rig's credentials. */
export function seaweedfsIdentities(creds: StoreCredentials): string {
  return JSON.stringify({ identities: [{ name: 'clink-qual', credentials: [{ accessKey: creds.accessKeyId, secretKey: creds.secretAccessKey }], actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'] }] }) + '\n';
}

/**
 * The command line of `weed server` on an address: its data directory, every inner server
 * bound to the address on fixed ports (the rig's by default; their gRPC ports are each + 10000), the S3 gateway on STORE_PORT with the identities
 * file, the Iceberg and Lance catalogs off, volumes of 1 GiB (at most 32, sparse files).
 */
export function seaweedfsCommand(weed: string, address: string, dataDir: string, identities: string, ports: { s3: number; master: number; volume: number; filer: number } = { s3: STORE_PORT, ...SEAWEEDFS_PORTS }): string {
  return [
    shQuote(weed),
    'server',
    `-dir=${shQuote(dataDir)}`,
    `-ip=${address}`,
    `-ip.bind=${address}`,
    `-master.port=${ports.master}`,
    '-master.volumeSizeLimitMB=1024',
    `-volume.port=${ports.volume}`,
    '-volume.max=32',
    `-filer.port=${ports.filer}`,
    '-s3',
    `-s3.port=${ports.s3}`,
    `-s3.config=${shQuote(identities)}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
  ].join(' ');
}

/** Starts the store of this kind on the store host, on its own data directory (MinIO: on `drives` drives). Returns its PID. */
export async function startStore(remote: Remote, kind: StoreKind, version: string, creds: StoreCredentials, drives = 1): Promise<number> {
  const a = remote.host.address;
  const d = remote.host.dataDir;
  if (kind === 'seaweedfs') {
    const identities = `${d}/etc/seaweedfs-s3.json`;
    await remote.exec(`mkdir -p ${shQuote(`${d}/etc`)}`);
    await remote.writeFile(identities, seaweedfsIdentities(creds), { mode: 0o600 });
    return startService(remote, { name: STORE_SERVICES.seaweedfs, command: seaweedfsCommand(storeBinaryPath(remote, kind, version), a, `${d}/${STORE_DATA_DIRS.seaweedfs}`, identities), cwd: d });
  }
  return startService(remote, {
    name: STORE_SERVICES.minio,
    command: minioCommand(storeBinaryPath(remote, kind, version), a, d, drives),
    env: minioEnv(creds, drives),
    cwd: d,
  });
}

/**
 * The command line of `minio server` on an address, on the drive layout's data (minioDataArg),
 * quoted whole so that the shell hands MinIO its ellipsis (`{1...4}`) as it is.
 */
export function minioCommand(minio: string, address: string, dataDir: string, drives: number): string {
  return `${shQuote(minio)} server ${shQuote(minioDataArg(dataDir, drives))} --address ${address}:${STORE_PORT} --console-address ${address}:${STORE_CONSOLE_PORT} --quiet`;
}

/** MinIO's environment: the rig's root credentials, the stale-upload expiry, no update checks; on several drives, MINIO_MULTI_DRIVE_ENV. */
export function minioEnv(creds: StoreCredentials, drives: number): Record<string, string> {
  return {
    MINIO_ROOT_USER: creds.accessKeyId,
    MINIO_ROOT_PASSWORD: creds.secretAccessKey,
    MINIO_API_STALE_UPLOADS_EXPIRY: STALE_UPLOADS_EXPIRY,
    MINIO_UPDATE: 'off',
    ...(drives > 1 ? MINIO_MULTI_DRIVE_ENV : {}),
  };
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
 * Uploads the store of this kind and starts it on the data an earlier rig left (kept across
 * `rig down`, with the credentials that open it; fresh ones when there are none), after
 * stopping whichever store ran there (one store answers on STORE_PORT), and creates the
 * bucket unless it is there already. MinIO runs on `drives` drives (MINIO_DRIVE_LAYOUTS),
 * each layout on its own data directory; the endpoint records the layout.
 */
export async function deployStore(remote: Remote, kind: StoreKind, binary: string, version: string, log: (l: string) => void, drives = 1): Promise<{ endpoint: StoreEndpoint; credentials: StoreCredentials }> {
  if (kind !== 'minio' && drives !== 1) throw new QualError('INTERNAL', `${kind} runs on one data directory; drives ${drives} is MinIO's only`);
  if (!(MINIO_DRIVE_LAYOUTS as readonly number[]).includes(drives)) throw new QualError('INTERNAL', `MinIO runs on ${MINIO_DRIVE_LAYOUTS.join(' or ')} drives, not ${drives}`);
  const kept = keptCredentials();
  const credentials: StoreCredentials = kept ?? { accessKeyId: `cq${randomBytes(6).toString('hex')}`, secretAccessKey: randomBytes(24).toString('base64url') };
  if (!kept) writeFileSync(credentialsPath(), JSON.stringify(credentials) + '\n', { mode: 0o600 });
  const dataDir = kind === 'minio' ? minioDataDir(drives) : STORE_DATA_DIRS[kind];
  log(`${remote.host.name}: ${describeStoreLayout(kind, drives)} data in ${dataDir}/ (kept across rig down), ${kept ? "the earlier rig's credentials" : 'fresh credentials'}`);
  for (const service of Object.values(STORE_SERVICES)) await stopService(remote, service);
  const copied = await uploadFile(remote, binary, storeBinaryPath(remote, kind, version), 0o755);
  log(`${remote.host.name}: ${kind} binary ${copied ? 'copied' : 'unchanged'}`);
  const dirs = kind === 'minio' ? minioDriveDirs(remote.host.dataDir, drives) : [`${remote.host.dataDir}/${dataDir}`];
  await remote.exec(`mkdir -p ${dirs.map(shQuote).join(' ')}`);
  await startStore(remote, kind, version, credentials, drives);
  const endpoint: StoreEndpoint = {
    endpoint: `http://${remote.host.address}:${STORE_PORT}`,
    region: 'us-east-1',
    bucket: BUCKET,
    credentialsFile: credentialsPath(),
    host: remote.host.name,
    version,
    kind,
    ...(kind === 'minio' ? { drives } : {}),
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
  const kind = storeKindOf(endpoint);
  try {
    await waitFor(`${kind} on ${remote.host.name} (${endpoint.endpoint}${STORE_HEALTH_PATHS[kind]})`, () => storeLive(endpoint.endpoint, kind), timeoutMs, 250);
  } catch (err) {
    throw new QualError('READINESS_TIMEOUT', `${(err as Error).message}\n--- ${remote.host.name} ${STORE_SERVICES[kind]} out.log ---\n${await serviceLogTail(remote, STORE_SERVICES[kind], 20).catch(() => '')}`);
  }
}

export interface StoreHealth {
  healthy: boolean;
  bucketPresent: boolean;
  error?: string;
}

export async function storeHealth(endpoint: StoreEndpoint, creds: StoreCredentials | null): Promise<StoreHealth> {
  const kind = storeKindOf(endpoint);
  const healthy = await storeLive(endpoint.endpoint, kind);
  if (!healthy) return { healthy, bucketPresent: false, error: `${STORE_HEALTH_PATHS[kind]} did not answer 200` };
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
