/**
 * The rig's files on an inventory host, and how `rig down` takes them back. Everything the
 * rig puts on a host lives in its dataDir; `rig up --inventory` claims the dataDir first
 * (claimDataDirCommand): when the folder is not there yet it records, in a marker file
 * inside it, the outermost folder it is about to create. So `rig down` can leave the host as
 * it found it: it removes every entry of dataDir but the ones kept across a down (uploaded
 * components, the store's data, the marker), and `rig down --purge` removes dataDir itself
 * with the empty folders it created above it, or only its contents when dataDir was there
 * before the rig (the operator's folder, perhaps a filesystem of its own).
 *
 * The local rig's hosts are folders under the state directory, removed by the operations
 * host itself (rig/down.ts removeRuntimeFiles): these commands are for hosts over SSH.
 */
import { shQuote } from './process.ts';

/** The marker in a dataDir that the rig created: its one line names the outermost folder created with it. */
export const DATA_DIR_MARKER = '.clink-qual-created';

/** The bash command that creates dataDir (and its parents) and, when it was not there, writes the marker. */
export function claimDataDirCommand(dataDir: string): string {
  const q = shQuote(dataDir);
  return `d=${q}; top=; while [ ! -e "$d" ]; do top=$d; d=$(dirname -- "$d"); done; mkdir -p -- ${q} && if [ -n "$top" ]; then printf '%s\\n' "$top" > ${q}/${DATA_DIR_MARKER}; fi`;
}

/**
 * The bash command that removes the rig's files from dataDir: every entry but `kept` and the
 * marker; with purge, dataDir itself and the empty folders up to the one the marker names
 * (when the rig created it), or else everything in it. Safe when dataDir is not there.
 */
export function removeHostFilesCommand(dataDir: string, purge: boolean, kept: readonly string[]): string {
  const q = shQuote(dataDir);
  if (!purge) {
    const keep = [...kept, DATA_DIR_MARKER].map(shQuote).join('|');
    return `shopt -s dotglob nullglob; cd -- ${q} 2>/dev/null || exit 0; for e in *; do case "$e" in ${keep}) ;; *) rm -rf -- "$e" ;; esac; done`;
  }
  return [
    `shopt -s dotglob nullglob; D=${q}; [ -d "$D" ] || exit 0`,
    `top=; [ -f "$D/${DATA_DIR_MARKER}" ] && top=$(head -n 1 -- "$D/${DATA_DIR_MARKER}")`,
    // The marker must name dataDir or a folder above it; anything else is not believed.
    `case "$D/" in "$top"/*) ;; *) top= ;; esac`,
    `if [ -z "$top" ]; then rm -rf -- "$D"/*; exit 0; fi`,
    `rm -rf -- "$D"; d=$(dirname -- "$D")`,
    `while case "$d/" in "$top"/*) true ;; *) false ;; esac && rmdir -- "$d" 2>/dev/null; do d=$(dirname -- "$d"); done; true`,
  ].join('; ');
}
