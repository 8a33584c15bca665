import type { Command } from '../../lib/cli.ts';
import { install, manifestPath } from '../../rig/install.ts';
import { ENGINES_WITH_PARTS, ENGINE_COMPONENTS, OPTIONAL_STORES } from '../../rig/install-plan.ts';
import { cacheDir } from '../../lib/paths.ts';
import { QualError } from '../../lib/errors.ts';

const command: Command = {
  name: 'rig install',
  summary: 'Install what the rig needs (Kafka, MinIO, sshd, iptables; Flink with --engine flink), cached and pinned',
  description: `Idempotent. Debian packages (openssh-server, iptables, iproute2, faketime, sudo) only when missing;
Apache Kafka from Maven Central; MinIO built with go install at a pinned version; all cached
under ${cacheDir()} (CLINK_QUAL_CACHE moves it). Writes a manifest with each part's version
and sha256. A second run checks the sha256s and downloads nothing.
Installed only when asked, on first use, or once an earlier install put them there (then
kept checked and current): Apache Flink's jars, S3 plugin, job and agent (Maven; --engine
flink, or the first campaign or smoke with engine flink installs them before its rig work),
and SeaweedFS, the second store (--store seaweedfs, or the first rig on it). --all installs
both. The Clink engine needs none of them.
The parts run side by side: the Debian packages; Kafka then Flink (one Maven at a time); MinIO
then SeaweedFS (Go). On a first run the ./clink-qual wrapper starts MinIO's build
(rig/build-minio.sh) in the background before npm ci; this command waits for that build and
takes its binary, or reports its failure with its log. On stderr each part says "start", then
its own notes, and ends "installed", "in place" (the Debian packages: "all present") or
"failed", with its time; while parts run
silently, one line every 10 s names them with their elapsed seconds; a last line gives the
total and each part's time.`,
  options: {
    json: { type: 'boolean', description: 'Print the manifest as JSON' },
    engine: { type: 'string', valueName: 'NAME', description: `Also install this engine's parts: ${ENGINES_WITH_PARTS.map((e) => `${e} (${ENGINE_COMPONENTS[e]!.join(', ')})`).join('; ')}; otherwise installed on its first use. clink has none of its own` },
    all: { type: 'boolean', description: `Install every optional part too: the parts of ${ENGINES_WITH_PARTS.join(', ')} and the store ${OPTIONAL_STORES.join(', ')}` },
    store: { type: 'string', description: "Also build this store: seaweedfs (built from the Go module proxy, several minutes cold; otherwise built on first use, by 'rig up --store seaweedfs' or a campaign with 'store: seaweedfs')" },
  },
  async run({ values }) {
    const t0 = Date.now();
    const store = values.store as string | undefined;
    if (store !== undefined && store !== 'seaweedfs' && store !== 'minio') throw new QualError('BAD_ARGUMENTS', `--store: minio or seaweedfs, not ${JSON.stringify(store)}`);
    const engine = values.engine as string | undefined;
    if (engine !== undefined && !Object.hasOwn(ENGINE_COMPONENTS, engine)) throw new QualError('BAD_ARGUMENTS', `--engine: ${Object.keys(ENGINE_COMPONENTS).join(' or ')}, not ${JSON.stringify(engine)}`);
    const { manifest, changed } = await install((l) => console.error(`rig install: ${l}`), { stores: store ? [store] : [], engines: engine ? [engine] : [], all: Boolean(values.all) });
    if (values.json) {
      console.log(JSON.stringify(manifest, null, 2));
      return;
    }
    for (const c of manifest.components) console.log(`${c.name.padEnd(16)} ${c.version.padEnd(40)} sha256:${c.sha256.slice(0, 16)}…  ${c.path}`);
    console.log(`${changed.length ? `installed or updated: ${changed.join(', ')}` : 'everything was already installed'} (${((Date.now() - t0) / 1000).toFixed(1)} s); manifest: ${manifestPath()}`);
  },
};
export default command;
