// One registry of every errorCode the service raises. The error-code reference
// (docs/reference/errors.md) is generated from it by `npm run docs:gen`.
import { TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';

export type TrpcCode = TRPCError['code'];

/**
 * The specification's error codes (data.code) with their HTTP statuses: no other code goes on the
 * wire. Every errorCode below uses one of them.
 */
export const specCodes = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BAD_REQUEST: 400,
  CONFLICT: 409,
  TIMEOUT: 408,
  INTERNAL_SERVER_ERROR: 500,
} as const satisfies Partial<Record<TrpcCode, number>>;

export type SpecCode = keyof typeof specCodes;

/**
 * tRPC's other codes (raised by tRPC itself: a mutation sent with GET, an unparsable input, ...)
 * folded into the specification's: client-side faults are BAD_REQUEST, server and upstream ones
 * INTERNAL_SERVER_ERROR ("safe to retry once with backoff").
 */
const specCodeByTrpcCode: Record<TrpcCode, SpecCode> = {
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  BAD_REQUEST: 'BAD_REQUEST',
  CONFLICT: 'CONFLICT',
  TIMEOUT: 'TIMEOUT',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
  PARSE_ERROR: 'BAD_REQUEST',
  PAYMENT_REQUIRED: 'BAD_REQUEST',
  METHOD_NOT_SUPPORTED: 'BAD_REQUEST',
  PRECONDITION_FAILED: 'BAD_REQUEST',
  PAYLOAD_TOO_LARGE: 'BAD_REQUEST',
  UNSUPPORTED_MEDIA_TYPE: 'BAD_REQUEST',
  UNPROCESSABLE_CONTENT: 'BAD_REQUEST',
  PRECONDITION_REQUIRED: 'BAD_REQUEST',
  CLIENT_CLOSED_REQUEST: 'BAD_REQUEST',
  TOO_MANY_REQUESTS: 'INTERNAL_SERVER_ERROR',
  NOT_IMPLEMENTED: 'INTERNAL_SERVER_ERROR',
  BAD_GATEWAY: 'INTERNAL_SERVER_ERROR',
  SERVICE_UNAVAILABLE: 'INTERNAL_SERVER_ERROR',
  GATEWAY_TIMEOUT: 'INTERNAL_SERVER_ERROR',
};

/**
 * The one HTTP status that is not its data.code's: a rate limit's refusal is 429 with Retry-After,
 * what HTTP clients, proxies and SDKs back off on, while data.code stays the specification's
 * INTERNAL_SERVER_ERROR, "safe to retry once with backoff" (docs/decisions/rate-limits.md).
 */
const httpStatusByTrpcCode: Partial<Record<TrpcCode, number>> = { TOO_MANY_REQUESTS: 429 };

/** What an error with this tRPC code carries on the wire: data.code, the numeric code, the HTTP status. */
export function wireCode(code: TrpcCode): {
  code: SpecCode;
  jsonRpcCode: number;
  httpStatus: number;
} {
  const spec = specCodeByTrpcCode[code] ?? 'INTERNAL_SERVER_ERROR';
  return {
    code: spec,
    jsonRpcCode: TRPC_ERROR_CODES_BY_KEY[spec],
    httpStatus: httpStatusByTrpcCode[code] ?? specCodes[spec],
  };
}

interface ErrorSpec {
  code: SpecCode;
  description: string;
  /** the tRPC code raised, when it is not data.code itself (wireCode folds it into data.code) */
  trpcCode?: TrpcCode;
}

export const errorRegistry = {
  // transport and validation
  VALIDATION_FAILED: {
    code: 'BAD_REQUEST',
    description:
      'The input failed schema validation; the message names each failing field and why; or a batch input keyed by anything but its call indexes.',
  },
  INVALID_JSON: {
    code: 'BAD_REQUEST',
    description:
      'The input or body is not valid JSON, is not UTF-8, or holds a prototype-poisoning key (`__proto__`, `constructor.prototype`).',
  },
  AMBIGUOUS_REQUEST: {
    code: 'BAD_REQUEST',
    description:
      'The request could be read two ways: x-api-key or Authorization sent twice, an API key together with a bearer token, the query parameter input or batch given twice, or a mutation with an input query parameter.',
  },
  BAD_REQUEST: {
    code: 'BAD_REQUEST',
    description: 'The request is malformed in a way no more specific code describes.',
  },
  BATCH_TOO_LARGE: {
    code: 'BAD_REQUEST',
    description: 'A batch call names more procedures than the configured maximum (MAX_BATCH_SIZE).',
  },
  PAYLOAD_TOO_LARGE: {
    code: 'BAD_REQUEST',
    description: 'The request body is larger than BODY_LIMIT_BYTES.',
  },
  REQUEST_TOO_LARGE: {
    code: 'BAD_REQUEST',
    description:
      "The request line and headers (a query's URL carries its input) are larger than HTTP_MAX_HEADER_BYTES.",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    code: 'BAD_REQUEST',
    description:
      'A mutation body that is not application/json, is declared in a charset other than UTF-8, or is compressed (Content-Encoding).',
  },
  PROCEDURE_NOT_FOUND: { code: 'NOT_FOUND', description: 'No procedure has that name.' },
  METHOD_NOT_SUPPORTED: {
    code: 'BAD_REQUEST',
    description:
      'A query sent with POST, a mutation sent with GET, a batch mixing queries and mutations, another HTTP method (DELETE, PUT, OPTIONS, ...), or a CORS preflight from an origin not in CORS_ORIGINS.',
  },
  INVALID_CURSOR: { code: 'BAD_REQUEST', description: 'The cursor was not produced by this list.' },
  PAGINATION_LIMIT_EXCEEDED: {
    code: 'BAD_REQUEST',
    description: 'pagination.limit above the maximum of 2000.',
  },
  REQUEST_TIMEOUT: {
    code: 'TIMEOUT',
    description:
      'The request line and headers, or the whole request with its body, did not arrive within HTTP_HEADERS_TIMEOUT_MS or HTTP_REQUEST_TIMEOUT_MS; the connection is closed.',
  },
  TOO_MANY_REQUESTS: {
    code: 'INTERNAL_SERVER_ERROR',
    trpcCode: 'TOO_MANY_REQUESTS',
    description:
      'The caller, or the client address, made more calls of this group (upload and download URLs, cube.sqlQuery, cube.query, exports, invitations, market and music data providers) than its rate limit allows in the window; HTTP 429 with Retry-After (also data.details.retryAfterSeconds): send it again after that many seconds.',
  },
  // who is calling
  AUTH_REQUIRED: {
    code: 'UNAUTHORIZED',
    description:
      'No credential was sent (x-api-key or Authorization: Bearer), or an Authorization scheme other than Bearer.',
  },
  INVALID_API_KEY: {
    code: 'UNAUTHORIZED',
    description: 'The API key is unknown, deleted or rotated away.',
  },
  INVALID_ACCESS_TOKEN: {
    code: 'UNAUTHORIZED',
    description: 'The bearer access token is unknown or expired.',
  },
  ACCESS_TOKEN_AUDIENCE: {
    code: 'UNAUTHORIZED',
    description:
      'The bearer access token was issued for another resource (RFC 8707): a token for the tool server is not accepted by the API, nor the reverse.',
  },
  ORGANIZATION_HEADER_REQUIRED: {
    code: 'BAD_REQUEST',
    description: 'An API-key call without exactly one x-organization-id header holding a uuid.',
  },
  ORGANIZATION_MISMATCH: {
    code: 'BAD_REQUEST',
    description: 'The organizationId of the input differs from the x-organization-id header.',
  },
  ORGANIZATION_REQUIRED: {
    code: 'BAD_REQUEST',
    description: 'The procedure needs an organizationId and none was given.',
  },
  // what they may do
  API_KEY_SCOPE_DENIED: {
    code: 'FORBIDDEN',
    description: "The procedure or organization is outside the API key's scope.",
  },
  NOT_ORGANIZATION_MEMBER: {
    code: 'FORBIDDEN',
    description: 'The caller does not belong to the requested organization.',
  },
  MEMBER_DISABLED: {
    code: 'FORBIDDEN',
    description: "The caller's membership of the organization is disabled.",
  },
  INSUFFICIENT_ROLE: {
    code: 'FORBIDDEN',
    description: "The caller's role in the organization is below the procedure's minimum role.",
  },
  PLATFORM_ROLE_REQUIRED: {
    code: 'FORBIDDEN',
    description: 'The procedure is for platform operators (c2_superadmin).',
  },
  ROLE_NOT_DECLARED: {
    code: 'FORBIDDEN',
    description: 'The procedure declares no minimum role, so nobody may call it.',
  },
  OBJECT_SIGNATURE_MISSING: {
    code: 'FORBIDDEN',
    description:
      "A request to the default install's object store (`{PUBLIC_URL}/objects/...`) carries no SigV4 signature: neither a presigned URL's `X-Amz-*` parameters nor an `Authorization` header.",
  },
  OBJECT_SIGNATURE_INVALID: {
    code: 'FORBIDDEN',
    description:
      'The SigV4 signature of a request to `{PUBLIC_URL}/objects/...` does not match: its key, organization prefix, query, method or a signed header (Content-Type, Content-Length) differs from what was signed, or other credentials signed it.',
  },
  OBJECT_SIGNATURE_EXPIRED: {
    code: 'FORBIDDEN',
    description:
      "The presigned URL to `{PUBLIC_URL}/objects/...` has expired (or is dated in the future), or a header-signed request's time is more than 15 minutes from the server's clock.",
  },
  OBJECT_REQUEST_UNSUPPORTED: {
    code: 'BAD_REQUEST',
    description:
      'An upload to `{PUBLIC_URL}/objects/...` without a Content-Length (a chunked body), or signed with an Authorization header instead of a presigned URL.',
  },
  // records
  ORGANIZATION_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'The organization does not exist or was deleted.',
  },
  API_KEY_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'No API key with that id is visible in the organization.',
  },
  API_KEY_NOT_MANAGEABLE: {
    code: 'FORBIDDEN',
    description:
      'The key belongs to another user who outranks the caller, spans other organizations, or would be rotated (only its owner may rotate a key).',
  },
  USER_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'No user with that id is visible in the organization.',
  },
  RIGHTSHOLDER_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'No rightsholder with that id is visible in the organization.',
  },
  INVITATION_NOT_FOUND: {
    code: 'NOT_FOUND',
    description:
      'No invitation with that id, or no invitation for that link token, in the organization.',
  },
  // organizations, members and invitations
  LAST_OWNER: {
    code: 'CONFLICT',
    description:
      'The last active owner of an organization cannot be removed, demoted or disabled, and the last active owner whose data-access role is unrestricted cannot be restricted either.',
  },
  ROLE_NOT_GRANTABLE: {
    code: 'FORBIDDEN',
    description:
      "The role is above the caller's own, or is a platform role (c2_*) and the caller is not a platform operator, or the caller's data-access role is restricted (no 'all', no invitation links).",
  },
  DATA_ACCESS_RESTRICTED: {
    code: 'FORBIDDEN',
    description:
      "The caller's data-access role is restricted to some rightsholders, and this action applies to the whole organization.",
  },
  MEMBER_OUTRANKS_CALLER: {
    code: 'FORBIDDEN',
    description:
      "The member's role is above the caller's own; only an equal or higher role may change them.",
  },
  USER_ALREADY_MEMBER: {
    code: 'CONFLICT',
    description: 'The user already belongs to the organization.',
  },
  INVITATION_ALREADY_PENDING: {
    code: 'CONFLICT',
    description: 'A pending invitation for that e-mail address exists; resend it instead.',
  },
  INVITATION_NOT_PENDING: {
    code: 'CONFLICT',
    description: 'The invitation is no longer pending: it was accepted, revoked or has expired.',
  },
  INVITATION_EMAIL_MISMATCH: {
    code: 'FORBIDDEN',
    description: "The invitation was sent to another e-mail address than the caller's.",
  },
  // rightsholders, lenses, activity
  RIGHTSHOLDER_NAME_TAKEN: {
    code: 'CONFLICT',
    description:
      'Another rightsholder of the organization has that name (ignoring case and surrounding space).',
  },
  LENS_NOT_FOUND: {
    code: 'NOT_FOUND',
    description:
      "No lens with that id is visible to the caller in the organization (another member's personal lens is not).",
  },
  LENS_NOT_OWNER: {
    code: 'FORBIDDEN',
    description: 'Only the owner of a lens may make it personal.',
  },
  ACTIVITY_SUBJECT_NOT_FOUND: {
    code: 'NOT_FOUND',
    description:
      'The subject does not exist in the organization and has no activity the caller may see.',
  },
  // statements and uploads
  STATEMENT_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'No statement with that id is visible to the caller in the organization.',
  },
  UPLOAD_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'No upload with that id in the organization.',
  },
  DISTRIBUTOR_NOT_FOUND: {
    code: 'NOT_FOUND',
    description:
      "No distributor with that id is visible in the organization (its own or the shared library's).",
  },
  MAPPING_NOT_FOUND: {
    code: 'NOT_FOUND',
    description:
      "No mapping with that id or header hash is visible in the organization (its own or the shared library's).",
  },
  FILE_VARIANT_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'The statement has no file of that variant (yet).',
  },
  FLAG_NOT_FOUND: { code: 'NOT_FOUND', description: 'No flag with that id on the statement.' },
  STATEMENT_STATE_CONFLICT: {
    code: 'CONFLICT',
    description:
      "The statement's status does not allow that action (e.g. completing a processed statement).",
  },
  STATEMENT_NOT_WAITING: {
    code: 'CONFLICT',
    description: 'The statement is not waiting in needs_mapping for that mapping.',
  },
  UPLOAD_OBJECT_MISSING: {
    code: 'BAD_REQUEST',
    description: 'Nothing was uploaded to the presigned URL (or the object is gone).',
  },
  UPLOAD_EMPTY: { code: 'BAD_REQUEST', description: 'The uploaded file has no bytes.' },
  UPLOAD_SIZE_MISMATCH: {
    code: 'BAD_REQUEST',
    description: "The uploaded file's size differs from the size announced in upload.uploadFile.",
  },
  UPLOAD_CHECKSUM_MISMATCH: {
    code: 'BAD_REQUEST',
    description:
      "The uploaded file's SHA-256 differs from the sha256 announced in upload.uploadFile (the statement fails).",
  },
  UPLOAD_OBJECT_CHANGED: {
    code: 'BAD_REQUEST',
    description:
      'The uploaded file was replaced after upload.uploadAction complete (a PUT to its URL after completing); the statement fails rather than read other bytes: upload the file again.',
  },
  UPLOAD_ABORTED: {
    code: 'BAD_REQUEST',
    description:
      "The client aborted the upload (upload.aborted); recorded as the statement's failure reason.",
  },
  MAPPING_COLUMN_MISSING: {
    code: 'BAD_REQUEST',
    description: 'The mapping reads a column the statement does not have.',
  },
  DATE_ORDER_AMBIGUOUS: {
    code: 'BAD_REQUEST',
    description:
      "A date column's year-first dates written with slashes (2014/01/06) read both as year/month/day and as year/day/month, and no date of the statement tells which: set the field's format to 'YMD' or 'YDM' in the mapping.",
  },
  AMOUNT_FORMAT_CONFLICT: {
    code: 'BAD_REQUEST',
    description:
      "A number column's cells are written two ways (a decimal comma and a decimal point, 1,50 and 12.00) and no one rule reads them all: the statement fails rather than read some 100 or 1000 times too large; failureReason.details lists the offending rows (row: the data row number, as source_row; value: the cell as written).",
  },
  ENCODING_UNKNOWN: {
    code: 'BAD_REQUEST',
    description:
      'The encoding named for a statement file is not one the reader decodes (iconv-lite names such as shift_jis, euc-jp, euc-kr, gb18030, big5, windows-1251, windows-1250, windows-1252, utf-8).',
  },
  STATEMENT_UNREADABLE: {
    code: 'BAD_REQUEST',
    description: 'The located table could not be read (malformed delimited text).',
  },
  INGEST_TIME_BUDGET_EXCEEDED: {
    code: 'BAD_REQUEST',
    description:
      "Processing the statement took longer than its job's time budget (INGEST_JOB_TIMEOUT_MS): it was stopped wherever it was.",
  },
  INGEST_FAILED: {
    code: 'INTERNAL_SERVER_ERROR',
    description: 'Processing failed on every retry; the cause is in the server log.',
  },
  // statement files (workers/statementFile.ts)
  FILE_EMPTY: {
    code: 'BAD_REQUEST',
    description: 'The uploaded statement file is empty (0 bytes).',
  },
  FILE_NO_DATA: {
    code: 'BAD_REQUEST',
    description:
      'The statement file holds no data: only white space, blank lines, empty cells or empty sheets.',
  },
  FILE_IS_HTML: {
    code: 'BAD_REQUEST',
    description:
      'The file is a web page (HTML), not a statement; download the statement itself from the portal.',
  },
  FILE_PDF_NO_TEXT: {
    code: 'BAD_REQUEST',
    description:
      'The PDF has no text layer (a scan, or pages printed as images): its table cannot be read; download the CSV or Excel version, or a PDF with text.',
  },
  FILE_ENCRYPTED: {
    code: 'BAD_REQUEST',
    description: 'The file (workbook, archive or PDF) is password-protected.',
  },
  FILE_DAMAGED: {
    code: 'BAD_REQUEST',
    description:
      'The file is damaged or cut short (a corrupt archive, workbook or PDF, an unclosed quoted field).',
  },
  FILE_TOO_LARGE_DECOMPRESSED: {
    code: 'BAD_REQUEST',
    description:
      'The archive, gzip file or workbook inflates past the size, entry-count or ratio limits (a compression bomb), or a PDF has more pages or pieces of text than are read.',
  },
  FILE_UNSUPPORTED_FORMAT: {
    code: 'BAD_REQUEST',
    description:
      'The file is not a supported table format (.xlsb, .ods, .numbers, XML Spreadsheet 2003, images, other binaries).',
  },
  FILE_UNSUPPORTED_COMPRESSION: {
    code: 'BAD_REQUEST',
    description:
      'A file in the zip archive is compressed with a method that is not read (Deflate64, bzip2, LZMA, XZ, Zstandard, PPMd, ...): only stored and Deflate are.',
  },
  FILE_ARCHIVE_TOO_DEEP: {
    code: 'BAD_REQUEST',
    description:
      'The archive holds archives inside archives inside archives; one archive inside another is read, no deeper.',
  },
  FILE_INTERLEAVED_TOTALS: {
    code: 'BAD_REQUEST',
    description:
      'Subtotal rows sit between detail rows (blocks closed by subtotals); reading them would double count. In a PDF they are kept out when each equals the rows it closes, refused when one does not.',
  },
  HEADER_NOT_FOUND: {
    code: 'BAD_REQUEST',
    description:
      'No row near the top of the table names its columns (a headerless file or records of several kinds).',
  },
  FILE_NOT_A_STATEMENT: {
    code: 'BAD_REQUEST',
    description:
      'The table is not a royalty statement: no column holds earnings (a catalogue or metadata export, a usage report without amounts) or it is a bank statement.',
  },
  FIELD_TOO_LARGE: {
    code: 'BAD_REQUEST',
    description:
      'A field, record or line is longer than the accepted maximum (a quote that never closes, a file without line breaks).',
  },
  FILE_TOO_MANY_COLUMNS: {
    code: 'BAD_REQUEST',
    description: 'The table has more than 10,000 columns (statements have tens); it is not read.',
  },
  FILE_TIME_BUDGET_EXCEEDED: {
    code: 'BAD_REQUEST',
    description: 'Reading the statement file took longer than its time budget.',
  },
  // mappings and distributors
  MAPPING_COLUMN_UNKNOWN: {
    code: 'BAD_REQUEST',
    description:
      "The mapping's fields name a column that is not among its headers (data.details.fields lists each path).",
  },
  MAPPING_FORMULA_INVALID: {
    code: 'BAD_REQUEST',
    description:
      "A computed amount's formula is wrong: multiply takes two different columns, for royaltyEarnings or grossRoyaltyEarnings only (data.details.fields lists each path).",
  },
  MAPPING_REQUIRED_FIELDS_MISSING: {
    code: 'BAD_REQUEST',
    description:
      'The mapping lacks a required field: stmtYear, stmtPeriod, stmtCadence, currency and royaltyEarnings are needed.',
  },
  MAPPING_HEADER_HASH_MISMATCH: {
    code: 'BAD_REQUEST',
    description: 'The headerHash given is not the header hash of the headers given.',
  },
  MAPPING_HEADER_HASH_TAKEN: {
    code: 'CONFLICT',
    description:
      'The organization already has a mapping for these headers (same header hash); update that one.',
  },
  MAPPING_VERIFY_FAILED: {
    code: 'BAD_REQUEST',
    description:
      'verify: the mapping does not fit the statements it would apply to (data.details.problems names them); nothing was changed.',
  },
  MAPPING_REDRIVE_HEADER_MISMATCH: {
    code: 'BAD_REQUEST',
    description:
      'A statement named in redriveFileIds has other headers than the mapping, so reprocessing it would not use this mapping.',
  },
  LIBRARY_MAPPING_READ_ONLY: {
    code: 'FORBIDDEN',
    description:
      "A mapping of the shared library cannot be changed or deleted; create the organization's own mapping for the same headers instead.",
  },
  LIBRARY_DISTRIBUTOR_READ_ONLY: {
    code: 'FORBIDDEN',
    description: 'A distributor of the shared library cannot be changed or deleted.',
  },
  DISTRIBUTOR_NAME_TAKEN: {
    code: 'CONFLICT',
    description:
      'Another distributor of the organization has that name (ignoring case and surrounding space).',
  },
  DISTRIBUTOR_IN_USE: {
    code: 'CONFLICT',
    description:
      'Mappings or statements of the organization still use the distributor (data.details counts them).',
  },
  // reference data: lookups, resolution, exchange rates, market data
  SALES_TYPE_LOOKUP_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'No sales-type lookup entry with that id or original.',
  },
  SOURCE_LOOKUP_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'No source lookup entry with that id or original.',
  },
  SALES_TYPE_NOT_IN_TAXONOMY: {
    code: 'BAD_REQUEST',
    description:
      'The primary or secondary sales type is not in the sales-type taxonomy (or the secondary belongs to another primary).',
  },
  GOLD_DATA_NOT_FOUND: { code: 'NOT_FOUND', description: 'No source gold-data row with that id.' },
  GOLD_DATA_RAW_VALUE_TAKEN: {
    code: 'CONFLICT',
    description: 'Another gold-data row has a raw value with the same normalized key.',
  },
  RAG_ENTRY_NOT_FOUND: { code: 'NOT_FOUND', description: 'No vector entry with that id.' },
  RAG_ENTRY_EXISTS: {
    code: 'CONFLICT',
    description: 'A vector entry with that name (normalized) and category already exists.',
  },
  RESOLVE_BATCH_TOO_LARGE: {
    code: 'BAD_REQUEST',
    description: 'A batch resolution names more than 10 strings.',
  },
  AI_PROVIDER_FAILED: {
    code: 'INTERNAL_SERVER_ERROR',
    description:
      "The configured AI provider did not answer, or answered something unusable or larger than 16 MB, or did not resolve every string within the call's time budget (details.results, details.unresolved).",
  },
  FX_RATES_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'No exchange rates were published on or before that date.',
  },
  MARKET_SYMBOL_NOT_FOUND: {
    code: 'NOT_FOUND',
    description:
      'The market data provider knows no such symbol (the unknown symbols are in data.details).',
  },
  TREASURY_YIELDS_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'No Treasury par yield curve is known for that date range.',
  },
  MARKET_PROVIDER_FAILED: {
    code: 'INTERNAL_SERVER_ERROR',
    description: 'The live market data provider did not answer, or answered something unusable.',
  },
  // analytics
  RIGHTSHOLDER_FILTER_REQUIRED: {
    code: 'BAD_REQUEST',
    description:
      'An analytics query whose filters do not name rightsholders on every path: rightsholder_id equals at least one id, at the top level, inside an and, or in every branch of an or.',
  },
  ANALYTICS_VALUE_OUT_OF_RANGE: {
    code: 'BAD_REQUEST',
    description:
      'A value of the answer is beyond what analytics computes exactly (US dollar amounts of 1e12 or more, in a row or a sum): statements hold amounts that large; narrow the filters or ask for the original currency.',
  },
  TOOL_TIMEOUT: {
    code: 'TIMEOUT',
    description:
      'A tool-server call did not finish within MCP_TIMEOUT_MS (55 s); for a long analytics query, submit it with cube.queryAsync and poll.',
  },
  TOOL_ORIGIN_REFUSED: {
    code: 'FORBIDDEN',
    description:
      "A request to the tool server from a browser origin other than the service's own or CORS_ORIGINS, or with a Host that is neither PUBLIC_URL's nor loopback (DNS rebinding).",
  },
  TOOL_READ_ONLY: {
    code: 'FORBIDDEN',
    description:
      'A mutation through the tool server without write access: the connection is read-only unless the person allowed the mcp:write scope at sign-in (API keys are read-only there); the message says how to grant it.',
  },
  DRY_RUN_UNSUPPORTED: {
    code: 'BAD_REQUEST',
    description:
      'svc_api_call with dryRun for a procedure whose effects cannot be rolled back (a presigned URL handed out, a job queued with the job runner, an object-store write, an outside request) or for a query (which changes nothing): the message says which; call it without dryRun.',
  },
  ANALYTICS_QUERY_TIMEOUT: {
    code: 'TIMEOUT',
    description:
      'The analytics query did not finish within the synchronous window (CUBE_SYNC_TIMEOUT_MS); it goes on running, poll for it with cube.queryPoll and the same body.',
  },
  SQL_QUERY_NOT_SELECT: {
    code: 'BAD_REQUEST',
    description:
      'cube.sqlQuery takes exactly one SELECT statement; anything else (several statements, SET, COPY, ATTACH, CREATE, PRAGMA, ...) is refused.',
  },
  SQL_QUERY_INVALID: {
    code: 'BAD_REQUEST',
    description:
      "The SQL statement could not be parsed, bound or run (the message is DuckDB's, about the caller's own table only).",
  },
  SQL_QUERY_TIMEOUT: {
    code: 'TIMEOUT',
    description:
      'The SQL statement ran longer than CUBE_SQL_TIMEOUT_MS and was interrupted, or did not finish within the synchronous window (poll for it).',
  },
  SQL_QUERY_RESOURCE_LIMIT: {
    code: 'BAD_REQUEST',
    description:
      "The SQL statement, or the caller's rows, needed more memory than CUBE_SQL_MEMORY_MB; sent again it fails again: narrow it or use cube.query.",
  },
  SQL_QUERY_BUSY: {
    code: 'INTERNAL_SERVER_ERROR',
    description:
      'Too many SQL statements are running or waiting (8 of the organization, or 64 in all); nothing is wrong with this one: send it again after a short wait or once an earlier answer arrived.',
  },
  SQL_QUERY_TOO_MANY_ROWS: {
    code: 'BAD_REQUEST',
    description:
      'The SQL result has more rows than CUBE_SQL_MAX_ROWS, or is larger than CUBE_SQL_MAX_RESULT_MB; add a LIMIT, select fewer columns or aggregate.',
  },
  INVALID_CUBE_SESSION: {
    code: 'UNAUTHORIZED',
    description: 'The embed session token is unknown or expired.',
  },
  CUBE_SESSION_SCOPE_DENIED: {
    code: 'FORBIDDEN',
    description:
      'An embed session token authorizes only cube reads (not cube.getSession) of its own organization.',
  },
  // exports
  EXPORT_NOT_FOUND: {
    code: 'NOT_FOUND',
    description:
      'No export with that id is visible to the caller in the organization (one naming a rightsholder outside their data access is not).',
  },
  EXPORT_FILE_NOT_FOUND: {
    code: 'NOT_FOUND',
    description:
      'The export has no file with that id (files exist only once the export is completed).',
  },
  EXPORT_FILTER_NOT_APPLICABLE: {
    code: 'BAD_REQUEST',
    description:
      'The filter does not apply to the export type (sources and territories are row filters; the statements type has none; the catalog type takes no filter).',
  },
  EXPORT_ACCESS_REVOKED: {
    code: 'FORBIDDEN',
    description:
      'The member who requested the export lost access to the organization or to one of its rightsholders before it was built (recorded on the export).',
  },
  EXPORT_XLSX_CELL_TOO_LONG: {
    code: 'BAD_REQUEST',
    description:
      'A text is longer than the 32,767 characters an Excel cell holds (recorded on the export); export it as CSV or Parquet.',
  },
  EXPORT_FAILED: {
    code: 'INTERNAL_SERVER_ERROR',
    description:
      'Building the export failed on every attempt (recorded on the export); the cause is in the server log.',
  },
  EXPORT_EXPIRED: {
    code: 'NOT_FOUND',
    description:
      'The export expired (its expiresAt passed): its files were deleted after the retention period (EXPORT_RETENTION_HOURS); trigger the export again.',
  },
  // catalog
  CATALOG_QUERY_INVALID: {
    code: 'BAD_REQUEST',
    description:
      'The catalog query (musicalDetails query language) is not valid; data.details.fields names each failing path.',
  },
  BLOCK_NOT_FOUND: {
    code: 'NOT_FOUND',
    description: 'No catalog block with that id is visible to the caller in the organization.',
  },
  MUSICAL_DETAIL_NOT_FOUND: {
    code: 'NOT_FOUND',
    description:
      'A musical detail id is not visible to the caller in the organization (or not in the given block).',
  },
  ENRICHMENT_PROVIDER_FAILED: {
    code: 'INTERNAL_SERVER_ERROR',
    description: 'The music data provider failed or is unreachable; retry later.',
  },
  PRODUCT_NOT_FOUND: {
    code: 'NOT_FOUND',
    description:
      'A product id is not visible to the caller in the organization (or not in the given block).',
  },
  CLUSTER_NOT_FOUND: {
    code: 'NOT_FOUND',
    description:
      'A title cluster id is not visible to the caller in the organization (or not in the given block).',
  },
  PRODUCT_LINK_INVALID: {
    code: 'BAD_REQUEST',
    description:
      'A product to musical detail relationship change does not fit: the link to delete or move does not exist, or the product is not a track (data.details names the change).',
  },
  // server
  INTERNAL_ERROR: {
    code: 'INTERNAL_SERVER_ERROR',
    description: 'An unexpected failure; details are logged, never returned.',
  },
  SERVICE_UNAVAILABLE: {
    code: 'INTERNAL_SERVER_ERROR',
    description: 'A dependency (database, object store) is not reachable.',
  },
  WORKER_QUEUE_FULL: {
    code: 'INTERNAL_SERVER_ERROR',
    description: 'The worker-thread queue is full; retry later.',
  },
  WORKER_FAILED: {
    code: 'INTERNAL_SERVER_ERROR',
    description: 'A worker thread failed unexpectedly.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof errorRegistry;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(errorRegistry, value);
}

/** An error with a stable machine code. Its message is public; `cause` is logged, never sent. */
export class AppError extends TRPCError {
  readonly errorCode: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    errorCode: ErrorCode,
    message?: string,
    opts: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    const spec: ErrorSpec = errorRegistry[errorCode];
    super({
      code: spec.trpcCode ?? spec.code,
      message: message ?? spec.description,
      cause: opts.cause,
    });
    this.name = 'AppError';
    this.errorCode = errorCode;
    this.details = opts.details;
  }
}

/** The errorCode a plain TRPCError (raised by tRPC itself) stands for. */
export function errorCodeForTrpcCode(code: TrpcCode): ErrorCode {
  switch (code) {
    case 'PARSE_ERROR':
      return 'INVALID_JSON';
    case 'BAD_REQUEST':
      return 'BAD_REQUEST';
    case 'NOT_FOUND':
      return 'PROCEDURE_NOT_FOUND';
    case 'METHOD_NOT_SUPPORTED':
      return 'METHOD_NOT_SUPPORTED';
    case 'PAYLOAD_TOO_LARGE':
      return 'PAYLOAD_TOO_LARGE';
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 'UNSUPPORTED_MEDIA_TYPE';
    case 'UNAUTHORIZED':
      return 'AUTH_REQUIRED';
    default:
      return 'INTERNAL_ERROR';
  }
}
