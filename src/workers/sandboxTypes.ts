// What an analytics sandbox process (workers/analyticsSandbox.ts) is sent and answers: shared by
// the process and src/analytics/sandbox.ts, which starts it.

export interface SandboxJob {
  file: string;
  sql: string;
  threads: number;
  memoryMb: number;
  timeoutMs: number;
  maxRows: number;
  maxResultMb: number;
}

export type SandboxResult =
  | { ok: true; schema: { name: string; column_type: string }[]; rows: unknown[][] }
  | {
      ok: false;
      errorCode:
        | 'SQL_QUERY_NOT_SELECT'
        | 'SQL_QUERY_INVALID'
        | 'SQL_QUERY_TIMEOUT'
        | 'SQL_QUERY_RESOURCE_LIMIT'
        | 'SQL_QUERY_TOO_MANY_ROWS';
      message: string;
    };
