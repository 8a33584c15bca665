/**
 * The oracle's GET signer (oracle/sigv4.ts) against the SDK's own, @smithy/signature-v4 with
 * S3's settings (the path signed as sent): the same Authorization and x-amz-date, byte for
 * byte, for keys with characters S3 encodes, at several dates and in two regions; the
 * signing key follows the day; and a changed secret changes the signature.
 */
import { Sha256 } from '@smithy/core/checksum';
import { extendedEncodeURIComponent } from '@smithy/core/protocols';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';
import t from 'tap';
import { amzDates, EMPTY_BODY_SHA256, GetSigner } from '../../../oracle/sigv4.ts';

const creds = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

async function sdkHeaders(region: string, host: string, path: string, at: Date): Promise<Record<string, string>> {
  const signer = new SignatureV4({ credentials: creds, region, service: 's3', sha256: Sha256, uriEscapePath: false, applyChecksum: false });
  const [hostname, port] = host.split(':');
  const signed = await signer.sign(
    new HttpRequest({ protocol: 'http:', hostname: hostname!, ...(port ? { port: Number(port) } : {}), method: 'GET', path, headers: { host, 'x-amz-checksum-mode': 'ENABLED', 'x-amz-content-sha256': EMPTY_BODY_SHA256 } }),
    { signingDate: at },
  );
  return signed.headers;
}

const encode = (bucket: string, key: string) => `/${bucket}/${key.split('/').map(extendedEncodeURIComponent).join('/')}`;

t.test('the same signature as @smithy/signature-v4, byte for byte', async (t) => {
  const keys = [
    'runs/r1/part-0-000001.jsonl',
    'runs/r1/p=3/subtask 2/ünïcode+plus&amp=eq(1)!*\'.jsonl',
    'runs/r1/../dot/./segments//double',
    'a~b_c-d.e',
  ];
  const dates = [new Date('2026-12-05T18:15:00.123Z'), new Date('2026-12-31T23:59:59.999Z'), new Date('2027-01-01T00:00:00.000Z')];
  let n = 0;
  for (const region of ['us-east-1', 'eu-central-1'])
    for (const host of ['10.231.0.40:9000', 'store.example'])
      for (const key of keys)
        for (const at of dates) {
          const path = encode('clink-qual', key);
          const ours = new GetSigner({ ...creds, region }).sign(host, path, at);
          const sdk = await sdkHeaders(region, host, path, at);
          t.equal(ours.authorization, sdk.authorization, `${region} ${host} ${key} ${at.toISOString()}: Authorization`);
          t.equal(ours['x-amz-date'], sdk['x-amz-date'], 'x-amz-date');
          t.equal(ours['x-amz-content-sha256'], sdk['x-amz-content-sha256']);
          t.equal(ours['x-amz-checksum-mode'], 'ENABLED');
          t.equal(ours.host, host);
          n++;
        }
  t.equal(n, 48);
});

t.test('the signing key follows the day; another secret, another signature', async (t) => {
  const signer = new GetSigner(creds);
  const path = encode('b', 'k');
  const before = signer.sign('h:1', path, new Date('2026-12-05T23:59:59Z'));
  const after = signer.sign('h:1', path, new Date('2026-12-06T00:00:01Z'));
  t.match(after.authorization, /Credential=AKIDEXAMPLE\/20261206\/us-east-1\/s3\/aws4_request,/);
  t.equal(after.authorization, (await sdkHeaders('us-east-1', 'h:1', path, new Date('2026-12-06T00:00:01Z'))).authorization, 'the key of the new day, not the cached one');
  t.equal(signer.sign('h:1', path, new Date('2026-12-05T23:59:59Z')).authorization, before.authorization, 'and back: the same signature as before');
  const other = new GetSigner({ ...creds, secretAccessKey: creds.secretAccessKey + 'x' }).sign('h:1', path, new Date('2026-12-05T23:59:59Z'));
  t.not(other.authorization, before.authorization);
  t.same(amzDates(new Date('2026-01-02T03:04:05.678Z')), { amzDate: '20260102T030405Z', day: '20260102' });
});

t.test('the request date is kept for its second, and follows the clock', async (t) => {
  const signer = new GetSigner(creds);
  const path = encode('b', 'k');
  const a = signer.sign('h:1', path, new Date('2026-12-05T12:00:00.100Z'));
  const b = signer.sign('h:1', path, new Date('2026-12-05T12:00:00.900Z'));
  t.equal(a['x-amz-date'], '20261205T120000Z');
  t.equal(b.authorization, a.authorization, 'the same second: the same date, the same signature');
  const c = signer.sign('h:1', path, new Date('2026-12-05T12:00:01.000Z'));
  t.equal(c['x-amz-date'], '20261205T120001Z', 'the next second: a new date');
  t.equal(c.authorization, (await sdkHeaders('us-east-1', 'h:1', path, new Date('2026-12-05T12:00:01.000Z'))).authorization, "and the SDK's signature of it");
  const before = Date.now();
  const now = signer.sign('h:1', path)['x-amz-date'];
  const after = Date.now();
  t.ok([before, after].map((ms) => amzDates(new Date(ms)).amzDate).includes(now), `no date given: the clock's (${now})`);
});
