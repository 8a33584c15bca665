/**
 * AWS Signature Version 4 for the oracle's one per-object request, a GET without a query or
 * a body: the same Authorization and X-Amz-Date headers that the SDK's signer
 * (@smithy/signature-v4, with uriEscapePath off and no session token, as oracle/store.ts
 * used it) puts on the same request at the same second, at a fraction of its cost.
 *
 * The SDK's signer pays, for every request, two HMACs to find its cached signing key (the
 * cache is keyed by an HMAC of the credentials), a new HMAC key object and promise-wrapped
 * hashing: about 0.1 ms of client CPU a GET on the development box, a tenth of a GET at 64
 * partitions (docs/qualification/oracle-flat.md). Here the signing key is derived once a
 * day (its scope's date), and a request costs one SHA-256 and one HMAC.
 * test/unit/oracle/sigv4.test.ts checks the headers against the SDK's signer.
 */
import { createHash, createHmac } from 'node:crypto';

/** The algorithm named in the string to sign and the Authorization header. */
const ALGORITHM = 'AWS4-HMAC-SHA256';

export interface GetSignerCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** `20261205T110000Z` and `20261205` for a date, as SigV4 writes them (whole seconds, UTC). */
export function sigv4Dates(at: Date): { longDate: string; shortDate: string } {
  const longDate = at.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
  return { longDate, shortDate: longDate.slice(0, 8) };
}

/**
 * Signs GETs of paths (already URI-encoded, signed as sent) for one set of credentials,
 * region and service. Only for a request without a query string and without a session token.
 */
export class GetSigner {
  readonly #creds: GetSignerCredentials;
  readonly #region: string;
  readonly #service: string;
  #keyDate = '';
  #key: Buffer = Buffer.alloc(0);

  constructor(creds: GetSignerCredentials, region: string, service = 's3') {
    this.#creds = creds;
    this.#region = region;
    this.#service = service;
  }

  /** The signing key of a scope's date (kSigning), derived once per date. */
  #signingKey(shortDate: string): Buffer {
    if (this.#keyDate !== shortDate) {
      const kDate = createHmac('sha256', `AWS4${this.#creds.secretAccessKey}`).update(shortDate).digest();
      const kRegion = createHmac('sha256', kDate).update(this.#region).digest();
      const kService = createHmac('sha256', kRegion).update(this.#service).digest();
      this.#key = createHmac('sha256', kService).update('aws4_request').digest();
      this.#keyDate = shortDate;
    }
    return this.#key;
  }

  /**
   * The headers to send: `headers` (lower-case names, every one signed; `host` and
   * `x-amz-content-sha256` among them) plus `x-amz-date` and `authorization`.
   */
  sign(path: string, headers: Readonly<Record<string, string>>, at: Date = new Date()): Record<string, string> {
    const { longDate, shortDate } = sigv4Dates(at);
    const all: Record<string, string> = { ...headers, 'x-amz-date': longDate };
    const names = Object.keys(all).sort();
    let canonicalHeaders = '';
    for (const n of names) canonicalHeaders += `${n}:${all[n]!.trim().replace(/\s+/g, ' ')}\n`;
    const signedHeaders = names.join(';');
    const payloadHash = all['x-amz-content-sha256'];
    if (payloadHash === undefined) throw new Error('GetSigner: the request has no x-amz-content-sha256 header');
    const canonicalRequest = `GET\n${path}\n\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
    const scope = `${shortDate}/${this.#region}/${this.#service}/aws4_request`;
    const stringToSign = `${ALGORITHM}\n${longDate}\n${scope}\n${createHash('sha256').update(canonicalRequest).digest('hex')}`;
    const signature = createHmac('sha256', this.#signingKey(shortDate)).update(stringToSign).digest('hex');
    all.authorization = `${ALGORITHM} Credential=${this.#creds.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
    return all;
  }
}
