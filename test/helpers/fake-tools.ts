/**
 * Fake build tools for the install tests: `go`, `mvn`, `java` and `apt-get` as small shell
 * scripts in a temporary bin directory, put first on PATH, so that rig/install.ts and
 * rig/build-minio.sh run their own logic (lanes, locks, markers, adoption) while nothing is
 * downloaded or built. Every call is appended to a calls file as one line. Environment
 * variables steer each fake tool T (GO, MVN):
 *
 *   FAKE_T_STARTED=file  touched when the tool starts
 *   FAKE_T_AWAIT=file    the tool waits (at most 20 s, then exits 9 saying so) until file exists
 *   FAKE_T_HOLD=file     the tool waits while file exists
 *   FAKE_T_FAIL=message  the tool prints message on stderr and exits 1
 *
 * `go install M@V` writes $GOBIN/<last element of M>; `mvn` writes what the Maven goals of
 * rig/install.ts and rig/install-flink.ts would (a jar in -DoutputDirectory, or
 * target/clink-qual-flink-<project>.jar for `package`), and records "mvn overlap" when two run at once.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const COMMON = `
calls="$FAKE_TOOLS_DIR/calls"
started() { [ -z "\${1:-}" ] || touch "$1"; }
await_file() {
  [ -z "\${1:-}" ] && return 0
  for _ in $(seq 1 400); do [ -e "$1" ] && return 0; sleep 0.05; done
  echo "$tool: timed out waiting for $1" >&2; echo "$tool timed out waiting for $1" >>"$calls"; exit 9
}
hold() { while [ -n "\${1:-}" ] && [ -e "$1" ]; do sleep 0.05; done; }
fail() { [ -z "\${1:-}" ] && return 0; echo "$tool: $1" >&2; exit 1; }
`;

const GO = `#!/usr/bin/env bash
tool=go
${COMMON}
echo "go $* CGO_ENABLED=\${CGO_ENABLED:-} GOFLAGS=\${GOFLAGS:-}" >>"$calls"
# Its own nice value (field 19 of /proc/<pid>/stat), when asked.
[ -n "\${FAKE_GO_NICE_FILE:-}" ] && awk '{ print $19 }' /proc/$$/stat >"$FAKE_GO_NICE_FILE"
started "\${FAKE_GO_STARTED:-}"
[ "$1" = install ] || { echo "fake go: only install" >&2; exit 2; }
echo "fake go: building $2"
await_file "\${FAKE_GO_AWAIT:-}"
hold "\${FAKE_GO_HOLD:-}"
fail "\${FAKE_GO_FAIL:-}"
mod="\${2%@*}"
mkdir -p "$GOBIN"
printf 'a fake build of %s\\n' "$2" >"$GOBIN/\${mod##*/}"
chmod +x "$GOBIN/\${mod##*/}"
`;

const MVN = `#!/usr/bin/env bash
tool=mvn
${COMMON}
echo "mvn $* (in $(basename "$PWD"))" >>"$calls"
mkdir "$FAKE_TOOLS_DIR/mvn.running" 2>/dev/null || echo "mvn overlap" >>"$calls"
trap 'rmdir "$FAKE_TOOLS_DIR/mvn.running" 2>/dev/null' EXIT
started "\${FAKE_MVN_STARTED:-}"
await_file "\${FAKE_MVN_AWAIT:-}"
hold "\${FAKE_MVN_HOLD:-}"
fail "\${FAKE_MVN_FAIL:-}"
out=""; artifact=""
for a in "$@"; do case "$a" in -DoutputDirectory=*) out="\${a#*=}" ;; -Dartifact=*) artifact="\${a#*=}" ;; esac; done
case " $* " in
  *" dependency:copy-dependencies "*) mkdir -p "$out"; echo "a jar for $(basename "$PWD")" >"$out/dependency-1.0.jar" ;;
  *" dependency:copy "*) IFS=: read -r _ a v <<<"$artifact"; mkdir -p "$out"; echo "$artifact" >"$out/$a-$v.jar" ;;
  *" package "*) p="$(basename "$PWD")"; mkdir -p target; echo "built $p" >"target/clink-qual-flink-\${p%-build}.jar" ;;
esac
`;

const RECORD_ONLY = (tool: string) => `#!/usr/bin/env bash
echo "${tool} $*" >>"$FAKE_TOOLS_DIR/calls"
`;

export interface FakeTools {
  /** The temporary directory: bin/ holds the tools, calls their record. */
  dir: string;
  /** An environment with the fake tools first on PATH (and FAKE_TOOLS_DIR), over `base`. */
  env(base?: NodeJS.ProcessEnv, extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** The recorded calls, one a line, those of `tool` only when given. */
  calls(tool?: string): string[];
  /** A path inside the temporary directory (for STARTED, AWAIT and HOLD files). */
  file(name: string): string;
  remove(): void;
}

export function fakeTools(prefix = 'cq-fake-tools-'): FakeTools {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const bin = path.join(dir, 'bin');
  const write = (name: string, text: string) => writeFileSync(path.join(bin, name), text, { mode: 0o755 });
  mkdirSync(bin);
  write('go', GO);
  write('mvn', MVN);
  write('java', RECORD_ONLY('java'));
  write('apt-get', RECORD_ONLY('apt-get'));
  writeFileSync(path.join(dir, 'calls'), '');
  return {
    dir,
    env: (base = process.env, extra = {}) => ({ ...base, PATH: `${bin}:${base.PATH ?? ''}`, FAKE_TOOLS_DIR: dir, ...extra }),
    calls: (tool) => {
      const all = readFileSync(path.join(dir, 'calls'), 'utf8').split('\n').filter(Boolean);
      return tool ? all.filter((l) => l.startsWith(`${tool} `)) : all;
    },
    file: (name) => path.join(dir, name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
