// Every procedure, over real HTTP, with inputs built from its own input schema and then made
// hostile: another tenant's organization and ids, SQL and path fragments, NUL bytes, 100,000
// characters, wrong types. Whatever the procedure, the answer is a result or a clear error
// (`data.code`, `data.errorCode`), never an internal error, and never shows the other tenant's data.
import t from 'tap';
import { appRouter } from '../../src/api/index.ts';
import { describeProcedures, inputJsonSchema } from '../../src/docs/schemas.ts';
import { computeHeaderHash } from '../../workers/headerHash.ts';
import { newOrganization, outsider, type Caller } from '../helpers/principals.ts';
import { HEADER, fields } from '../helpers/sampleMapping.ts';
import { startTestServer } from '../helpers/server.ts';
import type { Outcome, TrpcClient } from '../helpers/trpc.ts';
import type { MutationPath } from '../helpers/procedures.ts';

const srv = await startTestServer(t);

type Kind =
  | 'rightsholder'
  | 'distributor'
  | 'upload'
  | 'statement'
  | 'mapping'
  | 'lens'
  | 'export'
  | 'invitation'
  | 'user';
type Entities = Record<Kind, string>;

/** One of each kind of record an input names by id, made through the API in the caller's organization. */
async function entities(caller: Caller, label: string): Promise<Entities> {
  const org = caller.organizationId;
  const made = async (procedure: MutationPath, input: object): Promise<Record<string, string>> => {
    const r = await caller.client.mutate(procedure, { organizationId: org, ...input });
    if (!r.ok) throw new Error(`${procedure}: ${JSON.stringify(r.error)}`);
    return r.data as Record<string, string>;
  };
  const rightsholder = (await made('rightsholder.create', { name: `${label} Artist` })).id!;
  const upload = await made('upload.uploadFile', {
    rightsholderId: rightsholder,
    fileName: `${label}.csv`,
  });
  const ids: Entities = {
    rightsholder,
    distributor: (await made('distributor.create', { name: `${label} Distributor` })).id!,
    upload: upload.uploadId!,
    statement: upload.statementId!,
    mapping: (
      await made('mapping.create', {
        name: `${label} Mapping`,
        headers: HEADER,
        headerHash: computeHeaderHash(HEADER),
        fields,
      })
    ).id!,
    lens: (await made('lens.create', { name: `${label} Lens`, kind: 'query', payload: [1] })).id!,
    export: (
      await made('export.trigger', {
        type: 'royalty_lines',
        format: 'csv',
        rightsholderIds: [rightsholder],
      })
    ).exportId!,
    invitation: (
      await made('organization.addUser', {
        email: `${label.toLowerCase().replace(/\W+/g, '-')}@example.test`,
        role: 'member',
      })
    ).id!,
    user: caller.userId,
  };
  for (const [kind, id] of Object.entries(ids))
    if (typeof id !== 'string') throw new Error(`no ${kind} id`);
  return ids;
}

/** The kind of record an id names, by its key (or, for `id`, by the procedure's namespace). */
function kindOf(procedure: string, key: string): Kind {
  const byKey: Record<string, Kind> = {
    statementId: 'statement',
    statementIds: 'statement',
    fileIds: 'statement',
    file: 'statement',
    file_id: 'statement',
    redriveFileIds: 'statement',
    uploadId: 'upload',
    upload_id: 'upload',
    distributorId: 'distributor',
    distributorIds: 'distributor',
    distributor_id: 'distributor',
    mappingId: 'mapping',
    mapping_id: 'mapping',
    ids: 'mapping',
    exportId: 'export',
    invitationId: 'invitation',
    userId: 'user',
    actorUserId: 'user',
    ownerUserId: 'user',
    lastUpdatedById: 'user',
  };
  if (key === 'id') {
    const namespace = procedure.split('.')[0]!;
    return (['distributor', 'mapping', 'lens'] as string[]).includes(namespace)
      ? (namespace as Kind)
      : 'rightsholder';
  }
  return byKey[key] ?? 'rightsholder';
}

// the other tenant, with data whose names must never appear in an answer to anyone else
const SECRET = 'Zq7-foreign-secret';
const foreign = await newOrganization(srv, `${SECRET} Org`);
const theirEntities = await entities(foreign, SECRET);

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  minItems?: number;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
}

interface Fill {
  organizationId: string;
  /** the id of each other kind of record */
  ids: Entities;
  procedure: string;
  /** every free-text string; null keeps a plain valid-looking one */
  text: string | null;
  /** required properties only */
  minimal?: boolean;
}

/** The schema itself: a nullable or optional one's value form, an intersection's parts together. */
function resolve(schema: Schema): Schema {
  const options = schema.anyOf ?? schema.oneOf;
  if (options) return resolve(options.find((o) => o.type !== 'null') ?? options[0]!);
  if (schema.allOf) return resolve(Object.assign({}, ...schema.allOf));
  return schema;
}

const freeText = (s: Schema) =>
  s.type === 'string' && s.enum === undefined && s.const === undefined && !s.format && !s.pattern;

/** A value of the schema: ids and free-text strings as `fill` says. */
function sample(raw: Schema, fill: Fill, key = ''): unknown {
  const schema = resolve(raw);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((x) => x !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(schema.properties ?? {})) {
        if (!fill.minimal || schema.required?.includes(k)) out[k] = sample(v, fill, k);
      }
      return out;
    }
    case 'array':
      return Array.from({ length: Math.max(fill.minimal ? 0 : 1, schema.minItems ?? 0) }, () =>
        sample(schema.items ?? {}, fill, key),
      );
    case 'integer':
    case 'number':
      return (
        schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1)
      );
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string': {
      if (schema.format === 'uuid')
        return key === 'organizationId'
          ? fill.organizationId
          : fill.ids[kindOf(fill.procedure, key)];
      if (schema.format === 'date-time') return '2024-03-01T00:00:00.000Z';
      if (schema.format === 'date') return '2024-03-01';
      if (schema.format === 'email') return 'someone@example.test';
      if (schema.format === 'uri' || schema.format === 'url') return 'https://example.test/x';
      if (fill.text !== null && freeText(schema)) return fill.text;
      if (typeof schema.default === 'string') return schema.default;
      return 'a'.repeat(Math.max(1, schema.minLength ?? 1));
    }
    default:
      return fill.text ?? 'a';
  }
}

/** The paths of the free-text strings of a schema (an array's by its first item). */
function textPaths(raw: Schema, path: (string | number)[] = [], depth = 0): (string | number)[][] {
  const schema = resolve(raw);
  if (depth > 6) return [];
  if (freeText(schema)) return [path];
  if (schema.type === 'array' && schema.items)
    return textPaths(schema.items, [...path, 0], depth + 1);
  return Object.entries(schema.properties ?? {}).flatMap(([k, v]) =>
    textPaths(v, [...path, k], depth + 1),
  );
}

/**
 * The minimal value `value` of the schema with `text` at `path` (made along the way with its
 * minimal values), cut to the string's longest allowed length when `fit`.
 */
function withText(
  raw: Schema,
  value: unknown,
  path: (string | number)[],
  text: string,
  fill: Fill,
  fit: boolean,
): unknown {
  if (path.length === 0) return fit ? text.slice(0, resolve(raw).maxLength ?? text.length) : text;
  const schema = resolve(raw);
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const list = Array.isArray(value) ? [...value] : [];
    list[0] = withText(
      schema.items ?? {},
      list[0] ?? sample(schema.items ?? {}, fill),
      rest,
      text,
      fill,
      fit,
    );
    return list;
  }
  const sub = schema.properties?.[head!] ?? {};
  const object = { ...((value as Record<string, unknown> | undefined) ?? {}) };
  object[head!] = withText(sub, object[head!] ?? sample(sub, fill, head), rest, text, fill, fit);
  return object;
}

/** Every leaf of a value replaced by an object a query builder might read as an operator. */
function operators(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(operators);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, k === 'organizationId' ? v : operators(v)]),
    );
  return { $ne: null, toString: 'x', __proto__: { admin: true } };
}

const HOSTILE = [
  "'; DROP TABLE statements; --",
  '" OR "1"="1',
  'x\u0000y',
  'half \ud800 pair',
  "%_\\' ESCAPE '",
  'analytics_full_view.royalty_earnings) UNION ALL SELECT * FROM pg_user --',
  "read_csv('/etc/passwd')",
  '../../../../etc/passwd',
  '__proto__',
  '<script>alert(1)</script>',
  '𝄞🎵 ÉÑ \u202e',
];

const procedures = describeProcedures(appRouter);

interface Seen {
  procedure: string;
  mode: string;
  outcome: Outcome<unknown> | { thrown: string };
}

/** One call; what an answer may never be (`platform`: a platform administrator's call, who may see every tenant). */
async function check(
  t: { fail(message: string): unknown },
  client: TrpcClient,
  platform: boolean,
  seen: Seen[],
  procedure: string,
  method: 'GET' | 'POST',
  mode: string,
  input: unknown,
): Promise<Outcome<unknown> | null> {
  let outcome: Outcome<unknown>;
  try {
    outcome = await client.call(method, procedure, input);
  } catch (error) {
    // not a tRPC envelope at all
    seen.push({ procedure, mode, outcome: { thrown: (error as Error).message } });
    t.fail(
      `${procedure} (${mode}) answered outside the envelope: ${(error as Error).message.slice(0, 300)}`,
    );
    return null;
  }
  seen.push({ procedure, mode, outcome });
  if (
    outcome.status >= 500 ||
    (!outcome.ok && outcome.error.data.code === 'INTERNAL_SERVER_ERROR')
  ) {
    t.fail(
      `${procedure} (${mode}) failed inside: ${outcome.status} ${JSON.stringify(outcome.error ?? {}).slice(0, 400)}`,
    );
  }
  if (
    !outcome.ok &&
    !(typeof outcome.error.data.errorCode === 'string' && outcome.error.data.errorCode.length > 0)
  ) {
    t.fail(
      `${procedure} (${mode}) error without an errorCode: ${JSON.stringify(outcome.error).slice(0, 300)}`,
    );
  }
  if (!platform && JSON.stringify(outcome).includes(SECRET))
    t.fail(`${procedure} (${mode}) showed another tenant's data`);
  return outcome;
}

t.test(
  'every procedure answers hostile input with a result or a clear error, never an internal one',
  async (t) => {
    const seen: Seen[] = [];
    for (const p of procedures) {
      if (p.meta?.minRole === 'none') continue;
      // a fresh organization per procedure: a valid call that deletes or disables something spoils no other
      const own = await newOrganization(srv, `Sweep ${p.name}`);
      const schema = inputJsonSchema(p.input) as Schema;
      const mine: Fill = {
        organizationId: own.organizationId,
        ids: await entities(own, 'Sweep'),
        procedure: p.name,
        text: null,
      };
      // the platform's procedures are called by a platform administrator, so their handlers see the input
      const platform = p.meta?.minRole === 'c2_superadmin';
      const client = platform
        ? (await outsider(srv, own.organizationId, 'c2_superadmin')).client
        : own.client;
      const call = (mode: string, input: unknown) =>
        check(t, client, platform, seen, p.name, p.method, mode, input);

      // the other tenant: its organization, or its ids inside one's own organization
      const theirs = await call(
        'foreign organization',
        sample(schema, { ...mine, organizationId: foreign.organizationId, ids: theirEntities }),
      );
      if (theirs && !platform && schema.properties?.organizationId)
        t.equal(theirs.ok, false, `${p.name}: another organization is refused`);
      await call('foreign ids', sample(schema, { ...mine, ids: theirEntities }));
      await call(
        'foreign ids, minimal',
        sample(schema, { ...mine, ids: theirEntities, minimal: true }),
      );
      // hostile text in every free string at once, then in each alone in an otherwise minimal valid
      // input, so that it reaches the handler rather than a neighbour's validation (a GET's input
      // rides in its URL: several long strings there are REQUEST_TOO_LARGE)
      const long = 'x'.repeat(100_000);
      for (const text of [...HOSTILE, long])
        await call(`text ${JSON.stringify(text.slice(0, 24))}`, sample(schema, { ...mine, text }));
      const minimal = { ...mine, minimal: true };
      // (NUL and lone surrogates are refused in every string before any handler: they go in the first round only)
      const mixed = HOSTILE.filter((h) => !h.includes('\u0000') && !h.includes('\ud800')).join(' ');
      for (const path of textPaths(schema)) {
        const at = (text: string, fit: boolean) =>
          call(
            `text at ${path.join('.')}`,
            withText(schema, sample(schema, minimal), path, text, minimal, fit),
          );
        for (const text of HOSTILE.slice(0, 2)) await at(text, true);
        await at(mixed, true);
        await at(long, false);
      }
      await call('operators', operators(sample(schema, mine)));
      await call('array for object', [sample(schema, mine)]);
      await call('a number', 42);
    }
    const calls = seen.length;
    t.ok(calls > procedures.length * 10, `${calls} calls made`);
    const errors = new Map<string, number>();
    for (const s of seen) {
      const code =
        'thrown' in s.outcome
          ? 'thrown'
          : s.outcome.ok
            ? 'ok'
            : `${s.outcome.error.data.code}/${s.outcome.error.data.errorCode}`;
      errors.set(code, (errors.get(code) ?? 0) + 1);
    }
    t.comment(JSON.stringify(Object.fromEntries([...errors].sort((a, b) => b[1] - a[1]))));
  },
);

t.test("the other tenant's data is untouched", async (t) => {
  const artists = await foreign.client.query('rightsholder.list', {
    organizationId: foreign.organizationId,
  });
  t.equal(artists.ok, true);
  t.same(
    (artists.data as { data: { id: string; name: string }[] }).data.map((r) => [r.id, r.name]),
    [[theirEntities.rightsholder, `${SECRET} Artist`]],
  );
  const lenses = await foreign.client.query('lens.list', {
    organizationId: foreign.organizationId,
  });
  t.same(
    (lenses.data as { data: { id: string; name: string }[] }).data.map((r) => [r.id, r.name]),
    [[theirEntities.lens, `${SECRET} Lens`]],
  );
  const org = foreign.organizationId;
  t.match(
    await foreign.client.query('distributor.getById', {
      organizationId: org,
      id: theirEntities.distributor,
    }),
    { ok: true, data: { name: `${SECRET} Distributor` } },
  );
  t.match(
    await foreign.client.query('mapping.getById', {
      organizationId: org,
      id: theirEntities.mapping,
    }),
    { ok: true, data: { name: `${SECRET} Mapping`, revision: 1 } },
  );
  t.match(
    await foreign.client.query('export.status', {
      organizationId: org,
      exportId: theirEntities.export,
    }),
    { ok: true, data: { id: theirEntities.export } },
  );
  const invitations = await foreign.client.query('organization.listInvitations', {
    organizationId: org,
  });
  t.match(invitations, {
    ok: true,
    data: { data: [{ id: theirEntities.invitation, status: 'pending' }] },
  });
  const statements = await foreign.client.mutate('upload.statements', {
    organizationId: foreign.organizationId,
    filter: { statementIds: [theirEntities.statement] },
  });
  t.match(statements, {
    ok: true,
    data: {
      items: [{ id: theirEntities.statement, status: 'uploading', fileName: `${SECRET}.csv` }],
    },
  });
  t.match(await foreign.client.query('organization.getById', { organizationId: org, id: org }), {
    ok: true,
    data: { name: `${SECRET} Org` },
  });
});
