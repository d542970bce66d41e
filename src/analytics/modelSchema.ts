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
  const resolver = new ModelResolver(model, issues);
  resolver.checkNames();
  const dimensions = resolver.resolveDimensions();
  const measures = resolver.resolveMeasures();
  checkJoinScopes(model, issues);
  checkFacts(model, issues);
  const timeSql = model.dimensions.filter((d) => d.type === 'time');
  if (timeSql.length === 0)
    issues.push({ path: 'dimensions', message: 'the view needs at least one time dimension' });
  return { model, dimensions, measures, joinOrder: resolver.joinOrder };
}

/** Resolves a model's members: references expanded, joins closed and ordered, issues collected. */
class ModelResolver {
  private readonly factColumns: Set<string>;
  private readonly aliasToJoin = new Map<string, JoinName>();
  /** joins ordered by their requirements (and cycles reported) */
  readonly joinOrder: JoinName[] = [];
  private readonly dimensionByName: Map<string, SemanticModel['dimensions'][number]>;
  private readonly expanded = new Map<string, Expansion>();
  private readonly stack: string[] = [];

  constructor(
    private readonly model: SemanticModel,
    private readonly issues: ModelIssue[],
  ) {
    this.factColumns = new Set(model.facts.columns.map((c) => c.name));
    const joinNames = Object.keys(model.joins) as JoinName[];
    for (const name of joinNames) {
      const join = model.joins[name];
      if (this.aliasToJoin.has(join.alias) || join.alias === 'f')
        issues.push({ path: `joins.${name}.alias`, message: `alias ${join.alias} is used twice` });
      this.aliasToJoin.set(join.alias, name);
    }
    const visiting = new Set<JoinName>();
    for (const name of joinNames) this.visitJoin(name, `joins.${name}`, visiting);
    this.dimensionByName = new Map(model.dimensions.map((d) => [d.name, d]));
  }

  private visitJoin(name: JoinName, path: string, visiting: Set<JoinName>): void {
    if (this.joinOrder.includes(name)) return;
    if (visiting.has(name)) {
      this.issues.push({ path, message: `join ${name} requires itself` });
      return;
    }
    const join = this.model.joins[name];
    if (!join) {
      this.issues.push({ path, message: `unknown join ${name}` });
      return;
    }
    visiting.add(name);
    for (const r of join.requires) this.visitJoin(r, `joins.${name}.requires`, visiting);
    visiting.delete(name);
    this.joinOrder.push(name);
  }

  /** The joins with every join they require, in join order. */
  private closeJoins(joins: Iterable<JoinName>): JoinName[] {
    const set = new Set<JoinName>();
    const add = (j: JoinName) => {
      if (set.has(j) || !this.model.joins[j]) return;
      set.add(j);
      for (const r of this.model.joins[j].requires) add(r);
    };
    for (const j of joins) add(j);
    return this.joinOrder.filter((j) => set.has(j));
  }

  /** Each dimension, measure and expression name is defined once. */
  checkNames(): void {
    const names = new Map<string, string>();
    const seen = (name: string, path: string) => {
      const other = names.get(name);
      if (other) this.issues.push({ path, message: `${name} is also defined at ${other}` });
      else names.set(name, path);
    };
    this.model.dimensions.forEach((d, i) => seen(d.name, `dimensions.${i}`));
    this.model.measures.forEach((m, i) => seen(m.name, `measures.${i}`));
    for (const e of Object.keys(this.model.expressions)) seen(e, `expressions.${e}`);
  }

  private expand(sql: string, joins: readonly JoinName[], path: string): Expansion {
    const out = new Set<JoinName>(joins);
    const text = sql.replace(REFERENCE, (_m, ref: string) => {
      const target = this.expandReference(ref, path);
      if (!target) return 'NULL';
      for (const j of target.joins) out.add(j);
      return `(${target.sql})`;
    });
    return { sql: text, joins: out };
  }

  private expandReference(ref: string, path: string): Expansion | undefined {
    const cached = this.expanded.get(ref);
    if (cached) return cached;
    if (this.stack.includes(ref)) {
      this.issues.push({
        path,
        message: `circular reference: ${[...this.stack, ref].join(' → ')}`,
      });
      return undefined;
    }
    const dimension = this.dimensionByName.get(ref);
    const expression = this.model.expressions[ref];
    if (!dimension && !expression) {
      this.issues.push({ path, message: `{${ref}} names no dimension or expression` });
      return undefined;
    }
    this.stack.push(ref);
    const source = dimension ?? expression!;
    const result = this.expand(
      source.sql,
      source.joins,
      dimension
        ? `dimensions.${this.model.dimensions.indexOf(dimension)}.sql`
        : `expressions.${ref}.sql`,
    );
    this.stack.pop();
    this.expanded.set(ref, result);
    return result;
  }

  /** The facts columns the SQL reads; an unknown column or a join's alias without the join is an issue. */
  private columnsOf(sql: string, joins: JoinName[], path: string): string[] {
    const columns = new Set<string>();
    const allowed = new Set(joins.map((j) => this.model.joins[j]?.alias));
    for (const m of sql.matchAll(QUALIFIED)) {
      const [, alias, column] = m as unknown as [string, string, string];
      if (alias === 'f') {
        if (
          !this.factColumns.has(column) &&
          !this.model.rollups.some((r) => r.countColumn === column)
        ) {
          this.issues.push({ path, message: `f.${column} is not a facts column` });
        }
        columns.add(column);
      } else if (this.aliasToJoin.has(alias) && !allowed.has(alias)) {
        this.issues.push({
          path,
          message: `uses ${alias}.${column} without the ${this.aliasToJoin.get(alias)} join`,
        });
      }
    }
    return [...columns].sort();
  }

  resolveDimensions(): Map<string, ResolvedMember> {
    const dimensions = new Map<string, ResolvedMember>();
    this.model.dimensions.forEach((d, i) => {
      const e = this.expandReference(d.name, `dimensions.${i}.sql`);
      if (!e) return;
      const joins = this.closeJoins(e.joins);
      dimensions.set(d.name, {
        name: d.name,
        kind: 'dimension',
        sql: e.sql,
        joins,
        columns: this.columnsOf(e.sql, joins, `dimensions.${i}.sql`),
      });
    });
    return dimensions;
  }

  resolveMeasures(): Map<string, ResolvedMeasure> {
    const rollupColumns = new Set(this.model.rollups.flatMap((r) => [...r.groupBy, ...r.sums]));
    const measures = new Map<string, ResolvedMeasure>();
    this.model.measures.forEach((m, i) => {
      const path = `measures.${i}`;
      const e = this.expand(m.sql, m.joins, `${path}.sql`);
      const joins = this.closeJoins(e.joins);
      const columns = this.columnsOf(e.sql, joins, `${path}.sql`);
      const rollupSql = this.rollupSqlOf(m, path, e.sql, joins, columns, rollupColumns);
      const { rowSql, rowJoins } = this.rowSqlOf(m, path);
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
    return measures;
  }

  /** A measure's SQL over the rollups: its own (`same`: every column it reads in a rollup) or given. */
  private rollupSqlOf(
    m: SemanticModel['measures'][number],
    path: string,
    sql: string,
    joins: JoinName[],
    columns: string[],
    rollupColumns: ReadonlySet<string>,
  ): string | null {
    if (m.rollup === 'same') {
      const outside = columns.filter((c) => !rollupColumns.has(c));
      if (outside.length > 0)
        this.issues.push({
          path: `${path}.rollup`,
          message: `reads ${outside.join(', ')}, which no rollup has`,
        });
      return sql;
    }
    if (!m.rollup) return null;
    const r = this.expand(m.rollup.sql, m.joins, `${path}.rollup.sql`);
    if (this.closeJoins(r.joins).join() !== joins.join())
      this.issues.push({ path: `${path}.rollup.sql`, message: 'must need the same joins as sql' });
    return r.sql;
  }

  /** A sum's value on one row, where the measure has one. */
  private rowSqlOf(
    m: SemanticModel['measures'][number],
    path: string,
  ): { rowSql: string | null; rowJoins: JoinName[] } {
    if (!m.rowSql) return { rowSql: null, rowJoins: [] };
    const r = this.expand(m.rowSql, m.joins, `${path}.rowSql`);
    const rowJoins = this.closeJoins(r.joins);
    this.columnsOf(r.sql, rowJoins, `${path}.rowSql`);
    if (m.aggType !== 'sum')
      this.issues.push({ path: `${path}.rowSql`, message: 'only sums have a row value' });
    return { rowSql: r.sql, rowJoins };
  }
}

/** A per-query relation must apply the caller's restrictions. */
function checkJoinScopes(model: SemanticModel, issues: ModelIssue[]): void {
  for (const [name, join] of Object.entries(model.joins)) {
    if (join.cte && !/\{scope:[a-z][a-z0-9_]*\}/.test(join.cte)) {
      issues.push({
        path: `joins.${name}.cte`,
        message: "a per-query relation must apply the caller's restrictions ({scope:<alias>})",
      });
    }
  }
}

/** The facts' sort key and the rollups name facts columns, and hold what the restrictions read. */
function checkFacts(model: SemanticModel, issues: ModelIssue[]): void {
  const factColumns = new Set(model.facts.columns.map((c) => c.name));
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
}
