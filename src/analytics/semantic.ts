// The model, resolved once at start: an invalid model stops the program here, with every problem
// listed (modelSchema.ts), rather than failing query by query.
import { createHash } from 'node:crypto';
import { model, type DimensionDef, type JoinName, type MeasureDef } from './model.ts';
import { resolveModel } from './modelSchema.ts';

export const semantic = resolveModel(model);

export const VIEW = model.view.name;

/** Changes whenever the model does: part of every cache key and of the facts database layout. */
export const MODEL_VERSION = createHash('sha256')
  .update(JSON.stringify(model))
  .digest('hex')
  .slice(0, 16);

export const dimensionDefs = new Map<string, DimensionDef>(
  model.dimensions.map((d) => [d.name, d]),
);
export const measureDefs = new Map<string, MeasureDef>(model.measures.map((m) => [m.name, m]));

export const GRANULARITIES = ['day', 'week', 'month', 'quarter', 'year'] as const;
export type QueryGranularity = (typeof GRANULARITIES)[number];

/** `analytics_full_view.x` → x, or undefined for another view or a malformed name. */
export function memberOf(fullName: string): string | undefined {
  const prefix = `${VIEW}.`;
  if (!fullName.startsWith(prefix)) return undefined;
  const rest = fullName.slice(prefix.length);
  return /^[a-z][a-z0-9_]*$/.test(rest) ? rest : undefined;
}

/** `analytics_full_view.x.month` → { member: x, granularity: month } for a time dimension x. */
export function granularMemberOf(
  fullName: string,
): { member: string; granularity: QueryGranularity } | undefined {
  const prefix = `${VIEW}.`;
  if (!fullName.startsWith(prefix)) return undefined;
  const [member, granularity, ...rest] = fullName.slice(prefix.length).split('.');
  if (rest.length > 0 || !member || !granularity) return undefined;
  if (dimensionDefs.get(member)?.type !== 'time') return undefined;
  return (GRANULARITIES as readonly string[]).includes(granularity)
    ? { member, granularity: granularity as QueryGranularity }
    : undefined;
}

export const full = (member: string): string => `${VIEW}.${member}`;

/**
 * A measure's value on one row, for `ungrouped` queries, or null when it has none: Cube renders a
 * measure ungrouped as its inner SQL (Tesseract's UngroupedMeasureSqlNode: `*` of a count is 1),
 * here the sums' row values (rowSql) and the row count's 1. The distinct count and the ratios
 * have no value of one row.
 */
export function ungroupedMeasure(name: string): { sql: string; joins: JoinName[] } | null {
  const m = semantic.measures.get(name);
  if (!m) return null;
  if (m.rowSql !== null) return { sql: m.rowSql, joins: m.rowJoins };
  return m.sql === 'count(*)' ? { sql: '1', joins: [] } : null;
}
