/**
 * What `rig install` installs, and when: the parts every run needs (the Debian packages,
 * Kafka, MinIO, Node) always; the parts only some runs need on demand. Those are an engine's
 * own (Flink's four: its jars, the S3 plugin, the job and the fault-point agent, about 170 MiB
 * and a minute of Maven with warm caches) and the second store (SeaweedFS, minutes of Go).
 * An optional part is installed when asked (`rig install --engine flink`, `--store seaweedfs`,
 * `--all`), on a run's first use of it (a campaign or smoke on `engine: flink`, a rig on
 * `store: seaweedfs`), or because an earlier install put it there: once installed, every
 * install keeps it checked and up to date (an edited job or agent is rebuilt). The Clink
 * smoke on a fresh machine thus waits for nothing it does not run.
 */

/** The manifest components each engine needs beyond the rig's own; Clink runs on Node, which every install brings. */
export const ENGINE_COMPONENTS: Readonly<Record<string, readonly string[]>> = {
  clink: [],
  flink: ['flink', 'flink-s3-fs-hadoop', 'flink-job', 'flink-agent'],
};

/** The engines with parts of their own to install (`rig install --engine NAME`). */
export const ENGINES_WITH_PARTS: readonly string[] = Object.keys(ENGINE_COMPONENTS).filter((e) => ENGINE_COMPONENTS[e]!.length > 0);

/** The optional stores `rig install` builds only on demand. */
export const OPTIONAL_STORES: readonly string[] = ['seaweedfs'];

/** What a `rig install` is asked for beyond what every run needs. */
export interface InstallAsk {
  /** Engines whose parts to install (a campaign's or smoke's engine, `--engine`). */
  engines?: readonly string[];
  /** Stores to build (`--store`, a rig brought up on one). */
  stores?: readonly string[];
  /** Every optional part (`--all`). */
  all?: boolean;
}

/** The optional parts one install runs. */
export interface InstallPlan {
  flink: boolean;
  seaweedfs: boolean;
}

/**
 * The optional parts to install, from what is asked and the names in the previous manifest
 * (`installed`): a part is installed when asked for, by --all, or when an earlier install
 * put any of it there (so it stays checked and current, and is never dropped from the manifest).
 */
export function installPlan(ask: InstallAsk, installed: readonly string[]): InstallPlan {
  const had = (names: readonly string[]) => names.some((n) => installed.includes(n));
  return {
    flink: Boolean(ask.all || ask.engines?.includes('flink') || had(ENGINE_COMPONENTS.flink!)),
    seaweedfs: Boolean(ask.all || ask.stores?.includes('seaweedfs') || had(['seaweedfs'])),
  };
}

/** The components `engine` needs that the manifest (`installed`, its names) lacks; none for an engine without parts of its own. */
export function missingEngineComponents(engine: string, installed: readonly string[]): string[] {
  const need = Object.hasOwn(ENGINE_COMPONENTS, engine) ? ENGINE_COMPONENTS[engine]! : [];
  return need.filter((n) => !installed.includes(n));
}

/**
 * The installed components of an engine built from this repository's sources whose version
 * is not the one the sources give now (`built`: name → version from the sources): an edited
 * job or agent since the last install. A run rebuilds them before it deploys them.
 */
export function staleEngineComponents(installed: readonly { name: string; version: string }[], built: Readonly<Record<string, string>>): string[] {
  return installed.filter((c) => Object.hasOwn(built, c.name) && built[c.name] !== c.version).map((c) => c.name);
}
