/**
 * Known defects of the object stores the rig runs, one entry each, written here once with the
 * page that documents it. The report names, in its claim boundaries, every defect that
 * applies to the store component recorded in the run's provenance.json (by name and
 * version), so a run is never published without the store defects it may have met.
 */

export interface StoreDefect {
  /** The finding's id, as docs/findings names it. */
  id: string;
  /** The store component's name, as provenance.json's components record it (matched case-insensitively). */
  store: string;
  /** The component versions it applies to, exactly as provenance.json records them. */
  versions: readonly string[];
  /** One line: what the store does wrong. */
  summary: string;
  /** The docs page, relative to the repository's root. */
  doc: string;
}

export const STORE_DEFECTS: readonly StoreDefect[] = [
  {
    id: 'F-1',
    store: 'minio',
    versions: ['v0.0.0-20260212201848-7aac2a2c5b7c'],
    summary:
      'a CompleteMultipartUpload whose client goes away while it is served can leave no object and an upload with no parts, so the re-commit every exactly-once sink makes after a crash fails with InvalidPart and the records are lost (reproduced without the rig by findings/minio-complete-cancel.ts)',
    doc: 'docs/findings/minio-complete-cancel.md',
  },
];

/** The known defects that apply to this store component (none for an unknown store or version). */
export function storeDefectsFor(store: { name: string; version: string } | undefined, registry: readonly StoreDefect[] = STORE_DEFECTS): StoreDefect[] {
  if (!store) return [];
  return registry.filter((d) => d.store.toLowerCase() === store.name.toLowerCase() && d.versions.includes(store.version));
}
