/**
 * Errors and exit codes.
 *
 * Exit codes follow Jepsen's meaning: 0 a clean PASS (or a command that did its job),
 * 1 FAIL (the system under test was shown wrong, or a gate failed), 2 unknown (for example
 * an aborted run), 254 bad arguments or bad input files, 255 an internal error.
 *
 * Every error the harness raises on purpose is a QualError with a code from a closed
 * union and a `canRetry` flag, so a caller can tell a transient store outage from a
 * protocol violation without parsing messages.
 */
export const EXIT = {
  ok: 0,
  fail: 1,
  unknown: 2,
  badInput: 254,
  internal: 255,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export type ErrorCode =
  | 'BAD_ARGUMENTS'
  | 'BAD_INPUT_FILE'
  | 'PRECONDITION'
  | 'HOST_UNREACHABLE'
  | 'HOST_KEY_MISMATCH'
  | 'REMOTE_COMMAND_FAILED'
  | 'READINESS_TIMEOUT'
  | 'INSTALL_FAILED'
  | 'STORE_UNAVAILABLE'
  | 'PROTOCOL_VIOLATION'
  | 'FAULT_NOT_LANDED'
  | 'ABORTED'
  | 'INTERNAL';

const RETRYABLE: ReadonlySet<ErrorCode> = new Set(['HOST_UNREACHABLE', 'STORE_UNAVAILABLE', 'READINESS_TIMEOUT']);

export class QualError extends Error {
  readonly code: ErrorCode;
  readonly canRetry: boolean;
  readonly details?: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'QualError';
    this.code = code;
    this.canRetry = RETRYABLE.has(code);
    this.details = details;
  }
}

/** Thrown to end a command with a given exit code after it has printed what it had to say. */
export class ExitError extends Error {
  readonly exitCode: ExitCode;
  constructor(exitCode: ExitCode, message = `exit ${exitCode}`) {
    super(message);
    this.name = 'ExitError';
    this.exitCode = exitCode;
  }
}

export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof ExitError) return err.exitCode;
  if (err instanceof QualError) {
    if (err.code === 'BAD_ARGUMENTS' || err.code === 'BAD_INPUT_FILE') return EXIT.badInput;
    if (err.code === 'INTERNAL') return EXIT.internal;
    if (err.code === 'PROTOCOL_VIOLATION') return EXIT.fail;
    // The environment stopped us (host, store, precondition, abort): nothing was shown either way.
    return EXIT.unknown;
  }
  return EXIT.internal;
}
