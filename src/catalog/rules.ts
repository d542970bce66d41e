// Rules: bulk overrides kept as a query and values, scoped to a block or to every block of a
// rightsholder. Applying a rule writes one override per matching musical detail (kind 'rule',
// dated when the rule was made); the unique index on (rule, block, identity) makes re-applying
// after every block refresh idempotent, and reaches musical details that appear later.
import type { Queryable } from '../db/pool.ts';
import { compileCatalogQuery, Params, parseCatalogQuery } from './query.ts';

export async function applyRules(
  db: Queryable,
  organizationId: string,
  blockId: string,
  ruleId?: string,
): Promise<number> {
  const { rows: rules } = await db.query<{ id: string; query: unknown }>(
    `SELECT r.id, r.query FROM catalog_rules r JOIN catalog_blocks b ON b.id = $2
     WHERE r.organization_id = $1 AND ((r.scope = 'block' AND r.block_id = b.id) OR (r.scope = 'rightsholder' AND r.rightsholder_id = b.rightsholder_id))
       AND ($3::uuid IS NULL OR r.id = $3)
     ORDER BY r.created_at, r.id`,
    [organizationId, blockId, ruleId ?? null],
  );
  let applied = 0;
  for (const rule of rules) {
    const params = new Params([organizationId, blockId, rule.id]);
    const where = compileCatalogQuery(parseCatalogQuery(rule.query), params);
    const res = await db.query(
      `INSERT INTO musical_detail_overrides (organization_id, block_id, identity_key, musical_detail_id, kind, rule_id, "values", created_by, created_at)
       SELECT $1, md.block_id, md.identity_key, md.id, 'rule', r.id, r.override_values, r.created_by, r.created_at
       FROM musical_details md JOIN catalog_blocks b ON b.id = md.block_id JOIN catalog_rules r ON r.id = $3
       WHERE md.organization_id = $1 AND md.block_id = $2 AND ${where}
       ON CONFLICT (rule_id, block_id, identity_key) WHERE rule_id IS NOT NULL DO NOTHING`,
      params.values,
    );
    applied += res.rowCount ?? 0;
  }
  return applied;
}
