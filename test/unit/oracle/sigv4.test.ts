/**
 * The oracle's GET signer (oracle/sigv4.ts) against the SDK's (@smithy/signature-v4, as
 * oracle/store.ts configured it before: uriEscapePath off, no checksum header of its own):
 * the same request at the same second gets the same x-amz-date and Authorization, for keys
 * that need encoding, an endpoint with a path, other regions and credentials, across a
 * change of date (the cached signing key is derived again), and against AWS's published
 * SigV4 example for a GET of an S3 object.
 */
import { Sha256 } from '@smithy/core/checksum';
import { extendedEncodeURIComponent } from '@smithy/core/protocols';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';
import t from 'tap';
import { GetSigner, sigv4Dates } from '../../../oracle/sigv4.ts';

const EMPTY_BODY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

async function sdkHeaders(creds: { accessKeyId: string; secretAccessKey: string }, region: string, host: string, path: string, headers: Record<string, string>, at: Date): Promise<Record<string, string>> {
  const signer = new SignatureV4({ credentials: creds, region, service: 's3', sha256: Sha256, uriEscapePath: false, applyChecksum: false });
  const [hostname, port] = host.split(':');
  const signed = await signer.sign(new HttpRequest({ protocol: 'http:', hostname: hostname!, ...(port ? { port: Number(port) } : {}), method: 'GET', path, headers: { ...headers } }), { signingDate: at });
  return (signed as HttpRequest).headers;
}

const encode = (bucketPath: string, key: string) => `${bucketPath}/${key.split('/').map(extendedEncodeURIComponent).join('/')}`;

t.test('the same headers as the SDK signer, request by request', async (t) => {
  const cases = [
    { creds: { accessKeyId: 'AKID', secretAccessKey: 'secret' }, region: 'us-east-1', host: '127.0.0.1:19400', path: encode('/oracle-bench', 'data-x/p0/0000000000.jsonl') },
    { creds: { accessKeyId: 'minioadmin', secretAccessKey: 'a longer secret/with+odd=chars' }, region: 'eu-west-3', host: 'store.example:9000', path: encode('/prefix/bucket', "runs/r 1/part-ä+b=c(1)!*'.jsonl") },
    { creds: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }, region: 'us-east-1', host: 'examplebucket.s3.amazonaws.com', path: '/test.txt' },
  ];
  const dates = [new Date('2026-12-05T11:12:13.456Z'), new Date('2026-12-05T23:59:59.999Z'), new Date('2026-12-06T00:00:00.000Z'), new Date('2013-05-24T00:00:00Z')];
  for (const c of cases) {
    const ours = new GetSigner(c.creds, c.region, 's3');
    for (const at of dates) {
      const headers = { host: c.host, 'x-amz-checksum-mode': 'ENABLED', 'x-amz-content-sha256': EMPTY_BODY_SHA256 };
      const want = await sdkHeaders(c.creds, c.region, c.host, c.path, headers, at);
      const got = ours.sign(c.path, headers, at);
      t.same(got, want, `${c.host}${c.path} at ${at.toISOString()}`);
    }
  }
});

t.test("AWS's published example: GET /test.txt with a Range header", async (t) => {
  // docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html, "GET Object".
  const signer = new GetSigner({ accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }, 'us-east-1');
  const got = signer.sign('/test.txt', { host: 'examplebucket.s3.amazonaws.com', range: 'bytes=0-9', 'x-amz-content-sha256': EMPTY_BODY_SHA256 }, new Date('2013-05-24T00:00:00Z'));
  t.equal(got['x-amz-date'], '20130524T000000Z');
  t.equal(got.authorization, 'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
});

t.test('dates: whole seconds, UTC', async (t) => {
  t.same(sigv4Dates(new Date('2026-01-02T03:04:05.999Z')), { longDate: '20260102T030405Z', shortDate: '20260102' });
});

t.test('a request without a payload hash is refused, not signed wrongly', async (t) => {
  t.throws(() => new GetSigner({ accessKeyId: 'a', secretAccessKey: 'b' }, 'us-east-1').sign('/b/k', { host: 'h' }), /x-amz-content-sha256/);
});
