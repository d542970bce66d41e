// Validation of the semantic model, and its resolution into what the compiler reads: every
// member's SQL with {references} expanded, the joins it needs (transitively) and the facts
// columns it reads. All problems are collected with their path and reported at once.
import { z } from 'zod';
import type { JoinName, SemanticModel } from './model.ts';

const identifier = z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be snake_case');
const joinName = z.enum([
  'statement',
  'fx',
  'rightsholder',
  'distributor',
  'salesType',
  'source',
  'latestPeriod',
  'catalog',
]);
const text = z.string().trim().min(1);

const modelShape = z.strictObject({
  view: z.strictObject({ name: identifier, title: text, description: text }),
  facts: z.strictObject({
    table: identifier,
    sortKey: z.array(identifier).min(1),
    columns: z.array(z.strictObject({ name: identifier, sqlType: text, description: text })).min(1),
  }),
  joins: z.record(
    joinName,
    z.strictObject({
      alias: identifier,
      sql: text,
      requires: z.array(joinName),
      cte: text.optional(),
    }),
  ),
  expressions: z.record(identifier, z.strictObject({ sql: text, joins: z.array(joinName) })),
  dimensions: z.array(
    z.strictObject({
      name: identifier,
      title: text,
      description: text.min(10),
      type: z.enum(['string', 'number', 'time']),
      sql: text,
      joins: z.array(joinName),
    }),
  ),
  measures: z.array(
    z.strictObject({
      name: identifier,
      title: text,
      description: text.min(10),
      type: z.literal('number'),
      aggType: z.enum(['count', 'countDistinct', 'sum', 'avg', 'number']),
      format: z.enum(['currency', 'percent']).optional(),
      sql: text,
      joins: z.array(joinName),
      rollup: z.union([z.literal('same'), z.strictObject({ sql: text }), z.null()]),
      rowSql: text.optional(),
    }),
  ),
  rollups: z.array(
    z.strictObject({
      name: identifier,
      table: identifier,
      description: text,
      groupBy: z.array(identifier).min(1),
      sums: z.array(identifier),
      countColumn: identifier,
    }),
  ),
});

export interface ModelIssue {
  path: string;
  message: string;
}

export interface ResolvedMember {
  name: string;
  kind: 'dimension' | 'measure';
  /** SQL with every {reference} expanded */
  sql: string;
  /** joins needed, in dependency order */
  joins: JoinName[];
  /** facts columns read through `f.` */
  columns: string[];
}

export interface ResolvedMeasure extends ResolvedMember {
  kind: 'measure';
  /** SQL over a rollup row, or null when no rollup can answer the measure */
  rollupSql: string | null;
  rowSql: string | null;
  rowJoins: JoinName[];
}

export interface ResolvedModel {
  model: SemanticModel;
  dimensions: Map<string, ResolvedMember>;
  measures: Map<string, ResolvedMeasure>;
  /** joins in an order where each comes after the ones it requires */
  joinOrder: JoinName[];
}

const REFERENCE = /\{([a-z][a-z0-9_]*)\}/g;
const QUALIFIED = /(?<![A-Za-z0-9_'])([a-z][a-z0-9_]*)\.([a-z_][a-z0-9_]*)/g;

interface Expansion {
  sql: string;
  joins: Set<JoinName>;
}

/** Every problem of the model, each with its path; empty when the model is sound. */
export function validateModel(input: unknown): ModelIssue[] {
  const parsed = modelShape.safeParse(input);
  if (!parsed.success) {
    return parsed.error.issues.map((i) => ({
      path: i.path.map(String).join('.') || '(model)',
      message: i.message,
    }));
  }
  const issues: ModelIssue[] = [];
  resolveInto(input as SemanticModel, issues);
  return issues;
}

/** The resolved model; throws with every issue when the model is not sound. */
export function resolveModel(model: SemanticModel): ResolvedModel {
  const shapeIssues = validateModel(model);
  if (shapeIssues.length > 0) throw new ModelError(shapeIssues);
  const issues: ModelIssue[] = [];
  const resolved = resolveInto(model, issues);
  if (issues.length > 0) throw new ModelError(issues);
  return resolved;
}

export class ModelError extends Error {
  constructor(readonly issues: ModelIssue[]) {
    super(
      `The semantic model is invalid:\n  ${issues.map((i) => `${i.path}: ${i.message}`).join('\n  ')}`,
    );
    this.name = 'ModelError';
  }
}

function resolveInto(model: SemanticModel, issues: ModelIssue[]): ResolvedModel {
  const factColumns = new Set(model.facts.columns.map((c) => c.name));
  const joinNames = Object.keys(model.joins) as JoinName[];
  const aliasToJoin = new Map<string, JoinName>();
  for (const name of joinNames) {
    const join = model.joins[name];
    if (aliasToJoin.has(join.alias) || join.alias === 'f')
      issues.push({ path: `joins.${name}.alias`, message: `alias ${join.alias} is used twice` });
    aliasToJoin.set(join.alias, name);
  }

  // joins ordered by their requirements (and cycles reported)
  const joinOrder: JoinName[] = [];
  const visiting = new Set<JoinName>();
  const visitJoin = (name: JoinName, path: string) => {
    if (joinOrder.includes(name)) return;
    if (visiting.has(name)) {
      issues.push({ path, message: `join ${name} requires itself` });
      return;
    }
    const join = model.joins[name];
    if (!join) {
      issues.push({ path, message: `unknown join ${name}` });
      return;
    }
    visiting.add(name);
    for (const r of join.requires) visitJoin(r, `joins.${name}.requires`);
    visiting.delete(name);
    joinOrder.push(name);
  };
  for (const name of joinNames) visitJoin(name, `joins.${name}`);

  const closeJoins = (joins: Iterable<JoinName>): JoinName[] => {
    const set = new Set<JoinName>();
    const add = (j: JoinName) => {
      if (set.has(j) || !model.joins[j]) return;
      set.add(j);
      for (const r of model.joins[j].requires) add(r);
    };
    for (const j of joins) add(j);
    return joinOrder.filter((j) => set.has(j));
  };

  const names = new Map<string, string>();
  const seen = (name: string, path: string) => {
    const other = names.get(name);
    if (other) issues.push({ path, message: `${name} is also defined at ${other}` });
    else names.set(name, path);
  };
  model.dimensions.forEach((d, i) => seen(d.name, `dimensions.${i}`));
  model.measures.forEach((m, i) => seen(m.name, `measures.${i}`));
  for (const e of Object.keys(model.expressions)) seen(e, `expressions.${e}`);

  const dimensionByName = new Map(model.dimensions.map((d) => [d.name, d]));
  const expanded = new Map<string, Expansion>();
  const stack: string[] = [];

  const expand = (sql: string, joins: readonly JoinName[], path: string): Expansion => {
    const out = new Set<JoinName>(joins);
    const text = sql.replace(REFERENCE, (_m, ref: string) => {
      const target = expandReference(ref, path);
      if (!target) return 'NULL';
      for (const j of target.joins) out.add(j);
      return `(${target.sql})`;
    });
    return { sql: text, joins: out };
  };

  const expandReference = (ref: string, path: string): Expansion | undefined => {
    const cached = expanded.get(ref);
    if (cached) return cached;
    if (stack.includes(ref)) {
      issues.push({ path, message: `circular reference: ${[...stack, ref].join(' → ')}` });
      return undefined;
    }
    const dimension = dimensionByName.get(ref);
    const expression = model.expressions[ref];
    if (!dimension && !expression) {
      issues.push({ path, message: `{${ref}} names no dimension or expression` });
      return undefined;
    }
    stack.push(ref);
    const source = dimension ?? expression!;
    const result = expand(
      source.sql,
      source.joins,
      dimension
        ? `dimensions.${model.dimensions.indexOf(dimension)}.sql`
        : `expressions.${ref}.sql`,
    );
    stack.pop();
    expanded.set(ref, result);
    return result;
  };

  const columnsOf = (sql: string, joins: JoinName[], path: string): string[] => {
    const columns = new Set<string>();
    const allowed = new Set(joins.map((j) => model.joins[j]?.alias));
    for (const m of sql.matchAll(QUALIFIED)) {
      const [, alias, column] = m as unknown as [string, string, string];
      if (alias === 'f') {
        if (!factColumns.has(column) && !model.rollups.some((r) => r.countColumn === column)) {
          issues.push({ path, message: `f.${column} is not a facts column` });
        }
        columns.add(column);
      } else if (aliasToJoin.has(alias) && !allowed.has(alias)) {
        issues.push({
          path,
          message: `uses ${alias}.${column} without the ${aliasToJoin.get(alias)} join`,
        });
      }
    }
    return [...columns].sort();
  };

  const dimensions = new Map<string, ResolvedMember>();
  model.dimensions.forEach((d, i) => {
    const e = expandReference(d.name, `dimensions.${i}.sql`);
    if (!e) return;
    const joins = closeJoins(e.joins);
    dimensions.set(d.name, {
      name: d.name,
      kind: 'dimension',
      sql: e.sql,
      joins,
      columns: columnsOf(e.sql, joins, `dimensions.${i}.sql`),
    });
  });

  const rollupColumns = new Set(model.rollups.flatMap((r) => [...r.groupBy, ...r.sums]));
  const measures = new Map<string, ResolvedMeasure>();
  model.measures.forEach((m, i) => {
    const path = `measures.${i}`;
    const e = expand(m.sql, m.joins, `${path}.sql`);
    const joins = closeJoins(e.joins);
    const columns = columnsOf(e.sql, joins, `${path}.sql`);
    let rollupSql: string | null = null;
    if (m.rollup === 'same') {
      rollupSql = e.sql;
      const outside = columns.filter((c) => !rollupColumns.has(c));
      if (outside.length > 0)
        issues.push({
          path: `${path}.rollup`,
          message: `reads ${outside.join(', ')}, which no rollup has`,
        });
    } else if (m.rollup) {
      const r = expand(m.rollup.sql, m.joins, `${path}.rollup.sql`);
      if (closeJoins(r.joins).join() !== joins.join())
        issues.push({ path: `${path}.rollup.sql`, message: 'must need the same joins as sql' });
      rollupSql = r.sql;
    }
    let rowSql: string | null = null;
    let rowJoins: JoinName[] = [];
    if (m.rowSql) {
      const r = expand(m.rowSql, m.joins, `${path}.rowSql`);
      rowJoins = closeJoins(r.joins);
      columnsOf(r.sql, rowJoins, `${path}.rowSql`);
      rowSql = r.sql;
      if (m.aggType !== 'sum')
        issues.push({ path: `${path}.rowSql`, message: 'only sums have a row value' });
    }
    measures.set(m.name, {
      name: m.name,
      kind: 'measure',
      sql: e.sql,
      joins,
      columns,
      rollupSql,
      rowSql,
      rowJoins,
    });
  });

  for (const [name, join] of Object.entries(model.joins)) {
    if (join.cte && !/\{scope:[a-z][a-z0-9_]*\}/.test(join.cte)) {
      issues.push({
        path: `joins.${name}.cte`,
        message: "a per-query relation must apply the caller's restrictions ({scope:<alias>})",
      });
    }
  }
  for (const k of model.facts.sortKey)
    if (!factColumns.has(k))
      issues.push({ path: 'facts.sortKey', message: `${k} is not a facts column` });
  for (const required of ['organization_id', 'rightsholder_id', 'statement_id']) {
    if (!factColumns.has(required))
      issues.push({
        path: 'facts.columns',
        message: `the facts need ${required}: the injected restrictions read it`,
      });
  }
  model.rollups.forEach((r, i) => {
    for (const c of [...r.groupBy, ...r.sums])
      if (!factColumns.has(c))
        issues.push({ path: `rollups.${i}`, message: `${c} is not a facts column` });
    for (const required of ['organization_id', 'rightsholder_id']) {
      if (!r.groupBy.includes(required))
        issues.push({
          path: `rollups.${i}.groupBy`,
          message: `must group by ${required}: the injected restrictions read it`,
        });
    }
    if (factColumns.has(r.countColumn))
      issues.push({ path: `rollups.${i}.countColumn`, message: 'must not be a facts column' });
  });
  const timeSql = model.dimensions.filter((d) => d.type === 'time');
  if (timeSql.length === 0)
    issues.push({ path: 'dimensions', message: 'the view needs at least one time dimension' });

  return { model, dimensions, measures, joinOrder };
}
