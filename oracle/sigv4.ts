/**
 * AWS Signature Version 4 for the oracle's one per-object call, a GET of an object (no query
 * string, no body: the empty body's SHA-256 is its payload hash), as the S3 docs define it
 * ("Authenticating Requests: Using the Authorization Header"): a canonical request, its
 * SHA-256 in the string to sign, and an HMAC-SHA256 of that with the day's signing key.
 *
 * Why not @smithy/signature-v4 (which it replaced, and against which its unit test checks
 * every signature byte for byte): that signer costs about 72 µs of CPU a request on the bench
 * box (it derives an HMAC of the credentials for its key cache on every call, builds a Sha256
 * object per digest, and runs each through promises); this one about 6 µs (one SHA-256, one
 * HMAC with the signing key kept as a KeyObject for the day). At 64 partitions a recount
 * makes 16 GETs for every one it makes at 4, so the signer's cost is part of the oracle's
 * growth with the number of objects (issue 31 item 2; docs/qualification/oracle-flat.md).
 */
import { createHash, createHmac, createSecretKey, hash, type KeyObject } from 'node:crypto';

/** The SHA-256 of an empty body: a GET's signed payload hash. */
export const EMPTY_BODY_SHA256 = createHash('sha256').digest('hex');

/** The headers a signed GET carries (lower-case names), Authorization included. */
export type SignedGetHeaders = Record<'host' | 'x-amz-checksum-mode' | 'x-amz-content-sha256' | 'x-amz-date' | 'authorization', string>;

const SIGNED_HEADERS = 'host;x-amz-checksum-mode;x-amz-content-sha256;x-amz-date';

/** `20261205T181500Z` and `20261205` of a date (UTC). */
export function amzDates(at: Date): { amzDate: string; day: string } {
  const iso = at.toISOString(); // 2026-12-05T18:15:00.000Z
  const amzDate = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return { amzDate, day: amzDate.slice(0, 8) };
}

export class GetSigner {
  readonly #accessKeyId: string;
  readonly #secretAccessKey: string;
  readonly #region: string;
  readonly #service: string;
  #key: { day: string; key: KeyObject } | undefined;
  /** The dates of the last second signed in (a recount signs hundreds of GETs a second). */
  #dates: { second: number; amzDate: string; day: string } | undefined;

  constructor(o: { accessKeyId: string; secretAccessKey: string; region?: string; service?: string }) {
    this.#accessKeyId = o.accessKeyId;
    this.#secretAccessKey = o.secretAccessKey;
    this.#region = o.region ?? 'us-east-1';
    this.#service = o.service ?? 's3';
  }

  /** The day's signing key: HMAC chain over the date, region, service and "aws4_request". */
  #signingKey(day: string): KeyObject {
    if (this.#key?.day !== day) {
      const kDate = createHmac('sha256', `AWS4${this.#secretAccessKey}`).update(day).digest();
      const kRegion = createHmac('sha256', kDate).update(this.#region).digest();
      const kService = createHmac('sha256', kRegion).update(this.#service).digest();
      this.#key = { day, key: createSecretKey(createHmac('sha256', kService).update('aws4_request').digest()) };
    }
    return this.#key.key;
  }

  /**
   * The headers of a GET of `path` (already URI-encoded, as sent: S3 signs the path without
   * encoding it again or normalising it) on `host` (with its port when not the default),
   * with the store's full-object checksum asked for (x-amz-checksum-mode: ENABLED).
   */
  sign(host: string, path: string, at?: Date): SignedGetHeaders {
    const ms = at ? at.getTime() : Date.now();
    const second = Math.floor(ms / 1000);
    if (this.#dates?.second !== second) this.#dates = { second, ...amzDates(new Date(ms)) };
    const { amzDate, day } = this.#dates;
    const scope = `${day}/${this.#region}/${this.#service}/aws4_request`;
    const canonical = `GET\n${path}\n\nhost:${host}\nx-amz-checksum-mode:ENABLED\nx-amz-content-sha256:${EMPTY_BODY_SHA256}\nx-amz-date:${amzDate}\n\n${SIGNED_HEADERS}\n${EMPTY_BODY_SHA256}`;
    const toSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${hash('sha256', canonical)}`;
    const signature = createHmac('sha256', this.#signingKey(day)).update(toSign).digest('hex');
    return {
      host,
      'x-amz-checksum-mode': 'ENABLED',
      'x-amz-content-sha256': EMPTY_BODY_SHA256,
      'x-amz-date': amzDate,
      authorization: `AWS4-HMAC-SHA256 Credential=${this.#accessKeyId}/${scope}, SignedHeaders=${SIGNED_HEADERS}, Signature=${signature}`,
    };
  }
}
