// The one way tests assert a procedure's outcome, at either depth (HTTP or in process): both give
// the same Outcome, errors shaped by the app's own error formatter (src/trpc/init.ts).
import type { Test } from 'tap';
import type { ErrorCode, SpecCode } from '../../src/errors.ts';
import type { Outcome, TrpcErrorBody } from './trpc.ts';

/**
 * The call failed with exactly this data.code and data.errorCode; returns the error body (for
 * its message, fields or details), undefined when the call succeeded (the test has failed then).
 */
export function isError(
  t: Test,
  res: Outcome<unknown>,
  code: SpecCode,
  errorCode: ErrorCode,
  label = `${code} ${errorCode}`,
): TrpcErrorBody | undefined {
  if (res.ok) {
    t.fail(`${label}: expected an error, got ${JSON.stringify(res.data)?.slice(0, 300)}`);
    return undefined;
  }
  t.same(
    { code: res.error.data.code, errorCode: res.error.data.errorCode },
    { code, errorCode },
    label,
  );
  return res.error;
}

/** The data of a call that must succeed; a failure fails the test and throws (nothing to go on with). */
export function ok<T>(t: Test, res: Outcome<T>, label = 'call succeeds'): T {
  if (!res.ok) {
    t.fail(`${label}: ${res.error.data.code} ${res.error.data.errorCode}: ${res.error.message}`);
    throw new Error(`${label}: ${res.error.data.errorCode}: ${res.error.message}`);
  }
  return res.data;
}

/** The details an error carries (data.details: each error code's own fields, read as the test expects them). */
export function details(res: Outcome<unknown>): any {
  return res.ok ? undefined : res.error.data.details;
}
