// rightsholder.deleteById: the dry run lists the consequences; the real one removes the
// rightsholder and everything stored under it, and records the removal.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { dependents } from '../../../src/rightsholders/dependents.ts';
import { createRightsholder, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const db = srv.deps.pool;

const count = async (sql: string, params: unknown[]) =>
  (await db.query<{ n: number }>(sql, params)).rows[0]!.n;

t.test('every table that refers to rightsholders is counted and removed', async (t) => {
  const { rows } = await db.query<{ table: string }>(
    `SELECT DISTINCT conrelid::regclass::text AS table FROM pg_constraint WHERE contype = 'f' AND confrelid = 'rightsholders'::regclass`,
  );
  const known = dependents.map((d) => d.table);
  for (const { table } of rows)
    t.ok(known.includes(table), `${table} is in src/rightsholders/dependents.ts`);
});

t.test(
  'a dry run counts what would go and changes nothing; the delete removes it all',
  async (t) => {
    const r = await createRightsholder(t, owner, 'Doomed');
    const keep = await createRightsholder(t, owner, 'Kept');
    ok(
      t,
      await owner.client.mutate('rightsholder.updateById', {
        organizationId: org,
        id: r.id,
        name: 'Doomed',
        aliases: ['D'],
      }),
    );
    const member = await addMember(srv, org, 'member');
    ok(
      t,
      await member.client.mutate('activity.trackVisit', {
        organizationId: org,
        subjectType: 'rightsholder',
        subjectId: r.id,
      }),
    );
    ok(t, await owner.client.mutate('rightsholder.trackOpen', { organizationId: org, id: r.id }));
    ok(
      t,
      await owner.client.mutate('organization.setRightsholderMdPriorities', {
        organizationId: org,
        rightsholderIds: [keep.id, r.id],
      }),
    );
    await db.query(
      `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
      [org, member.userId, [r.id, keep.id]],
    );

    const expected = {
      activityEvents: 2,
      visits: 2,
      mdPriorities: 1,
      statements: 0,
      catalogRules: 0,
      musicalDetails: 0,
      catalogBlocks: 0,
      dataAccessRoleEntries: 1,
    };
    const dry = ok(
      t,
      await owner.client.mutate('rightsholder.deleteById', {
        organizationId: org,
        id: r.id,
        dryRun: true,
      }),
    );
    t.same(dry, { id: r.id, name: 'Doomed', dryRun: true, removed: expected });
    t.equal(
      ok(t, await owner.client.query('rightsholder.getById', { organizationId: org, id: r.id }))
        .name,
      'Doomed',
      'still there',
    );
    t.same(
      ok(
        t,
        await owner.client.mutate('rightsholder.deleteById', {
          organizationId: org,
          id: r.id,
          dryRun: true,
        }),
      ),
      dry,
      'a dry run is repeatable',
    );
    const upper = ok(
      t,
      await owner.client.mutate('rightsholder.deleteById', {
        organizationId: org,
        id: r.id.toUpperCase(),
        dryRun: true,
      }),
    );
    t.same(upper.removed, expected, 'an id in capitals finds the same visits and events');

    const done = ok(
      t,
      await owner.client.mutate('rightsholder.deleteById', { organizationId: org, id: r.id }),
    );
    t.same(done, { id: r.id, name: 'Doomed', dryRun: false, removed: expected });
    isError(
      t,
      await owner.client.query('rightsholder.getById', { organizationId: org, id: r.id }),
      'NOT_FOUND',
      'RIGHTSHOLDER_NOT_FOUND',
    );
    t.equal(
      await count('SELECT count(*)::int AS n FROM rightsholders WHERE id = $1', [r.id]),
      0,
      'no soft delete: the row is gone',
    );
    t.equal(
      await count(`SELECT count(*)::int AS n FROM subject_visits WHERE subject_id = $1`, [r.id]),
      0,
    );
    t.equal(
      await count(
        `SELECT count(*)::int AS n FROM rightsholder_md_priorities WHERE rightsholder_id = $1`,
        [r.id],
      ),
      0,
    );
    t.same(
      (
        await db.query('SELECT rightsholder_ids FROM data_access_roles WHERE user_id = $1', [
          member.userId,
        ])
      ).rows[0].rightsholder_ids,
      [keep.id],
    );

    // its history is gone but for the removal itself, which the feed keeps
    const history = ok(
      t,
      await owner.client.query('activity.byEntity', {
        organizationId: org,
        subjectType: 'rightsholder',
        subjectId: r.id,
      }),
    );
    t.same(
      history.data.map((e: any) => [e.action, e.subjectLabel, e.actor.userId]),
      [['rightsholder.deleteById', 'Doomed', owner.userId]],
    );
    t.equal(
      ok(t, await owner.client.query('rightsholder.getById', { organizationId: org, id: keep.id }))
        .name,
      'Kept',
    );
    isError(
      t,
      await owner.client.mutate('rightsholder.deleteById', { organizationId: org, id: r.id }),
      'NOT_FOUND',
      'RIGHTSHOLDER_NOT_FOUND',
      'twice',
    );
  },
);

t.test('a soft-deleted rightsholder can be removed for good', async (t) => {
  const r = await createRightsholder(t, owner, 'Soft Then Hard');
  ok(
    t,
    await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: r.id,
      name: r.name,
      isDeleted: true,
    }),
  );
  t.equal(
    ok(t, await owner.client.mutate('rightsholder.deleteById', { organizationId: org, id: r.id }))
      .dryRun,
    false,
  );
  // the name is free again
  await createRightsholder(t, owner, 'Soft Then Hard');
});

t.test('admin only; unknown ids and other organizations are NOT_FOUND', async (t) => {
  const r = await createRightsholder(t, owner, 'Protected');
  const admin = await addMember(srv, org, 'admin');
  t.equal(
    ok(
      t,
      await admin.client.mutate('rightsholder.deleteById', {
        organizationId: org,
        id: r.id,
        dryRun: true,
      }),
    ).name,
    'Protected',
  );

  isError(
    t,
    await owner.client.mutate('rightsholder.deleteById', { organizationId: org, id: UNKNOWN_ID }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
  const other = await newOrganization(srv, 'Other');
  const theirs = await createRightsholder(t, other, 'Theirs');
  for (const dryRun of [true, false]) {
    const res = await owner.client.mutate('rightsholder.deleteById', {
      organizationId: org,
      id: theirs.id,
      dryRun,
    });
    isError(t, res, 'NOT_FOUND', 'RIGHTSHOLDER_NOT_FOUND');
    t.notMatch(JSON.stringify(res), /Theirs/);
  }
  t.equal(
    ok(
      t,
      await other.client.query('rightsholder.getById', {
        organizationId: other.organizationId,
        id: theirs.id,
      }),
    ).name,
    'Theirs',
  );

  const restrictedAdmin = await addMember(srv, org, 'admin');
  await db.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', '{}')`,
    [org, restrictedAdmin.userId],
  );
  isError(
    t,
    await restrictedAdmin.client.mutate('rightsholder.deleteById', {
      organizationId: org,
      id: r.id,
    }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.mutateUnchecked('rightsholder.deleteById', {
      organizationId: org,
      id: r.id,
      dryRun: 'yes',
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});
