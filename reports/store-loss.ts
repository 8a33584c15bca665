/**
 * The signature of the store losing a committed-to-be upload, F-1
 * (docs/findings/minio-complete-cancel.md): a CompleteMultipartUpload whose client went away
 * leaves the upload with 0 parts and no object, and every re-commit of the same parts is
 * answered InvalidPart, with no object at the key. An engine meets it as a re-commit refused
 * with InvalidPart and the object missing, and says so in its log (Clink's sink: "staged parts
 * missing or changed (InvalidPart) … no object at KEY: the checkpointed records are LOST";
 * Flink's S3Committer: "Object does not exist and MultiPart Upload … is not valid").
 *
 * Pure: from the text of the run's collected logs (logs/<host>/…). Finding the signature
 * does not change the verdict; it attributes the loss, in the findings, to the store.
 */

export interface StoreLossSignature {
  /** Log lines that show it. */
  lines: number;
  /** Hosts (logs/<host>/) whose logs show it. */
  hosts: string[];
  /** The first such line (trimmed, at most 300 characters). */
  example: string;
}

/** A re-commit answered InvalidPart with no object at the key, or an upload listed with 0 parts and no object. */
const SIGNATURES: readonly ((line: string) => boolean)[] = [
  (l) => /InvalidPart/.test(l) && /(no object at|object does not exist|NoSuchKey|object missing)/i.test(l),
  (l) => /Object does not exist and MultiPart Upload .* is not valid/.test(l),
  (l) => /\b0 parts\b/.test(l) && /(no object|object missing|NoSuchKey)/i.test(l),
];

/** Whether one log line shows F-1's signature (publish keeps every such line when it trims a log, so a published run renders the same). */
export function isStoreLossLine(line: string): boolean {
  return SIGNATURES.some((s) => s(line));
}

/**
 * F-1's signature in the collected logs, or null when no line shows it. A line that names an
 * object the harness itself deleted or replaced (a store-tamper fault's keys) is the engine
 * refusing that tamper, not the store losing data: it is not counted.
 */
export function storeLossSignature(logs: readonly { path: string; text: string }[], tamperedKeys: readonly string[] = []): StoreLossSignature | null {
  let lines = 0;
  const hosts = new Set<string>();
  let example: string | undefined;
  for (const log of logs) {
    for (const line of log.text.split('\n')) {
      if (!isStoreLossLine(line) || tamperedKeys.some((k) => line.includes(k))) continue;
      lines++;
      hosts.add(/^logs\/([^/]+)\//.exec(log.path)?.[1] ?? log.path);
      example ??= line.trim().slice(0, 300);
    }
  }
  return lines ? { lines, hosts: [...hosts].sort(), example: example! } : null;
}
