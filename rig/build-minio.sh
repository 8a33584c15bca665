#!/usr/bin/env bash
# Builds the pinned MinIO (rig/minio.pin) from source into clink-qual's cache, as
# <cache>/minio-<pin>/minio: the one build command for it. `rig install` (rig/install.ts)
# runs it; the ./clink-qual wrapper starts it in the background on a first run, before
# `npm ci`, so the build (minutes of Go on 2 cores) overlaps npm ci and the downloads, and
# `rig install` then waits for that build and adopts its binary.
#
#   rig/build-minio.sh              build, unless the binary is there; waits for a build under way
#   rig/build-minio.sh --start      when go is found and the binary is missing, the same in the
#                                   background; prints that build's id (nothing when none started)
#   rig/build-minio.sh --adopt ID   as the first, but when build ID (a --start) failed, exits 3
#                                   instead of building again: its failure is the answer
#   rig/build-minio.sh --where      prints the directory
#
# The directory holds build.lock (flock(1)ed by the one build under way: the kernel drops the
# lock when its holder dies, so no lock outlives its build; a second build waits for the
# first and then finds the binary), build.log (the last build's output), build.failed (the
# last build failed: its id and exit status) and minio (moved into place once built, never
# half-written). The cache is CLINK_QUAL_CACHE, else ~/.cache/clink-qual, as in lib/paths.ts.
# Exit: 0 the binary is there, 3 the adopted build failed, other: this build failed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pin="$(sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$here/minio.pin" | head -n 1 | tr -d '[:space:]')"
[ -n "$pin" ] || { echo "build-minio.sh: $here/minio.pin names no version" >&2; exit 254; }
dir="${CLINK_QUAL_CACHE:-$HOME/.cache/clink-qual}/minio-$pin"
export PATH="$PATH:/usr/local/go/bin"
id="build-$(date -u +%Y%m%dT%H%M%SZ)-$$"
adopt=""
case "${1:-}" in
  --where)
    echo "$dir"
    exit 0
    ;;
  --start)
    if [ -x "$dir/minio" ] || ! command -v go >/dev/null; then exit 0; fi
    mkdir -p "$dir"
    nohup bash "$here/build-minio.sh" --id "$id" </dev/null >/dev/null 2>&1 &
    echo "$id"
    exit 0
    ;;
  --id) id="$2" ;;
  --adopt) adopt="$2" ;;
  "") ;;
  *)
    echo "build-minio.sh: unknown argument $1" >&2
    exit 254
    ;;
esac

mkdir -p "$dir"
exec 9>>"$dir/build.lock"
if ! flock -n 9; then
  echo "waiting for the MinIO build under way (its log: $dir/build.log)"
  flock 9
fi
[ -x "$dir/minio" ] && exit 0
if [ -n "$adopt" ] && [ -f "$dir/build.failed" ] && grep -qxF "id $adopt" "$dir/build.failed"; then exit 3; fi
rm -rf "$dir/build.failed" "$dir/bin.tmp"
echo "$id: go install github.com/minio/minio@$pin (started $(date -u +%FT%TZ))" >"$dir/build.log"
rc=0
# GOGC=400: the compiler collects its garbage less often (more memory, a few hundred MB a
# compile). The same binary, byte for byte; 108-116 s against 127-131 s with an empty build
# cache on 2 cores (2026-12-05, two alternating pairs: docs/qualification/fresh-smoke-62456b2/gogc-build.txt).
# As root, the build runs 5 nice steps ahead of the rest of a first run's setup (npm ci,
# Kafka's download, the brokers' start), which has minutes to finish before the store can
# start anyway: on 2 cores the compile is the first run's critical path. Others build at
# their own nice value.
prio=()
if [ "$(id -u)" = 0 ]; then prio=(nice -n -5); fi
GOBIN="$dir/bin.tmp" CGO_ENABLED=0 GOFLAGS=-trimpath GOGC=400 "${prio[@]}" go install "github.com/minio/minio@$pin" >>"$dir/build.log" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && [ ! -f "$dir/bin.tmp/minio" ]; then
  echo "go install exited 0 but left no $dir/bin.tmp/minio" >>"$dir/build.log"
  rc=1
fi
if [ "$rc" -ne 0 ]; then
  echo "$id: go install exited $rc ($(date -u +%FT%TZ))" >>"$dir/build.log"
  printf 'id %s\nexit %s\nat %s\n' "$id" "$rc" "$(date -u +%FT%TZ)" >"$dir/build.failed"
  rm -rf "$dir/bin.tmp"
  exit 1
fi
mv -f "$dir/bin.tmp/minio" "$dir/minio"
rmdir "$dir/bin.tmp"
echo "$id: built $dir/minio ($(date -u +%FT%TZ))" >>"$dir/build.log"
