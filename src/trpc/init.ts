// initTRPC is called once, here. The error formatter is the one place the wire shape of errors
// is extended: every error carries data.errorCode from the registry in src/errors.ts.
import { initTRPC, TRPCError } from '@trpc/server';
import {
  AppError,
  errorCodeForTrpcCode,
  wireCode,
  type ErrorCode,
  type SpecCode,
} from '../errors.ts';
import type { Context } from './context.ts';
import type { MinRole } from '../access/roles.ts';

export interface ProcedureMeta {
  /** who may call: see roles.ts */
  minRole: MinRole;
  /** '' (web app), 'cli' (public command-line client) or 'admin' (admin tooling), as in procedures.tsv */
  scope: '' | 'cli' | 'admin';
  /** one line for schemas.json and llms.txt */
  summary: string;
  deprecated?: string;
}

interface Issue {
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>;
  message: string;
}

function validationIssues(cause: unknown): Issue[] | undefined {
  const issues = (cause as { issues?: unknown } | null | undefined)?.issues;
  return Array.isArray(issues) ? (issues as Issue[]) : undefined;
}

function issuePath(issue: Issue): string {
  const parts = (issue.path ?? []).map((p) =>
    String(typeof p === 'object' && p !== null ? p.key : p),
  );
  return parts.length > 0 ? parts.join('.') : '(input)';
}

export interface ErrorData {
  code: SpecCode;
  errorCode: ErrorCode;
  httpStatus: number;
  path: string | undefined;
  fields?: { path: string; message: string }[];
  details?: Record<string, unknown>;
}

export function describeError(error: TRPCError): {
  errorCode: ErrorCode;
  message: string;
  fields?: { path: string; message: string }[];
} {
  if (error instanceof AppError) return { errorCode: error.errorCode, message: error.message };
  const issues = error.code === 'BAD_REQUEST' ? validationIssues(error.cause) : undefined;
  if (issues) {
    const fields = issues.slice(0, 20).map((i) => ({ path: issuePath(i), message: i.message }));
    return {
      errorCode: 'VALIDATION_FAILED',
      message: `Invalid input: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`,
      fields,
    };
  }
  const errorCode = errorCodeForTrpcCode(error.code);
  // Unexpected errors say nothing about their cause: it may hold SQL, paths or secrets.
  if (errorCode === 'INTERNAL_ERROR') return { errorCode, message: 'Internal server error' };
  if (error.cause instanceof SyntaxError)
    return { errorCode: 'INVALID_JSON', message: 'The input is not valid JSON' };
  return { errorCode, message: error.message };
}

const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
  .create({
    isDev: false,
    // data.code, the numeric code and data.httpStatus are the specification's (src/errors.ts
    // specCodes), also for the codes tRPC raises itself (METHOD_NOT_SUPPORTED, PARSE_ERROR, ...);
    // the HTTP status follows data.httpStatus (responseMeta in src/app.ts).
    errorFormatter({ shape, error }) {
      const { errorCode, message, fields } = describeError(error);
      const wire = wireCode(error.code);
      const data: ErrorData = {
        code: wire.code,
        errorCode,
        httpStatus: wire.httpStatus,
        path: shape.data.path,
      };
      if (fields) data.fields = fields;
      if (error instanceof AppError && error.details) data.details = error.details;
      return { message, code: wire.jsonRpcCode, data };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const baseProcedure = t.procedure;
