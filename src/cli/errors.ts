// How the admin commands fail: a message for the operator and an exit code, never a stack trace.

/** A command that cannot be done as asked: its message is printed as it is, with no stack trace. */
export class CommandError extends Error {
  override name = 'CommandError';
  readonly exitCode: number = 1;
}

/** Bad arguments (or a file that cannot be read as asked): exit 2. */
export class UsageError extends CommandError {
  override name = 'UsageError';
  override readonly exitCode: number = 2;
}
