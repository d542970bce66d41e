// Rightsholder ids stored in organization settings (a member's data-access role, the
// musical-detail fetch priorities) against a concurrent rightsholder.deleteById: the check that
// the rightsholder exists holds it (a row lock) until the setting is written, so the delete either
// comes first (the setting is refused: RIGHTSHOLDER_NOT_FOUND) or waits and then takes the id out
// of it. The interleaving is forced: the setting is held between its check and its write by a
// lock this test takes, while the delete runs.
import t from 'tap';
import { lockWaiters, waitForLockWaiters } from '../../helpers/locks.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';
import { insertRightsholder } from './helpers.ts';
import { ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const pool = srv.deps.pool;
const owner = await newOrganization(srv, 'Race Label');
const org = owner.organizationId;

/**
 * Runs `setting` while the rows `lockSql` names are locked by this test (so it stops at its
 * write, after its check), deletes `rightsholderId` meanwhile, and lets the setting go once the
 * delete has finished or waits for the setting.
 */
async function raceDelete(
  lockSql: string,
  lockParams: unknown[],
  setting: () => Promise<Outcome<any>>,
  rightsholderId: string,
) {
  const holder = await pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(lockSql, lockParams);
    const set = setting();
    await waitForLockWaiters(pool, 1);
    let deleteSettled = false;
    const removed = owner.client
      .mutate('rightsholder.deleteById', { organizationId: org, id: rightsholderId })
      .finally(() => (deleteSettled = true));
    // the delete either completes (it does not wait for the setting) or queues behind it
    for (let i = 0; i < 500 && !deleteSettled; i++) {
      if ((await lockWaiters(pool)) >= 2) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await holder.query('COMMIT');
    return { set: await set, removed: await removed };
  } finally {
    holder.release();
  }
}

t.test(
  'setDataAccessRole naming a rightsholder being deleted stores no id of a rightsholder that is gone',
  async (t) => {
    const kept = await insertRightsholder(srv, org, 'Kept');
    const doomed = await insertRightsholder(srv, org, 'Doomed');
    const member = await addMember(srv, org, 'member');
    const role = (ids: string[]) =>
      owner.client.mutate('user.setDataAccessRole', {
        organizationId: org,
        userId: member.userId,
        role: { mode: 'restricted', rightsholderIds: ids },
      });
    ok(t, await role([kept]));
    const { set, removed } = await raceDelete(
      'SELECT 1 FROM data_access_roles WHERE organization_id = $1 AND user_id = $2 FOR UPDATE',
      [org, member.userId],
      () => role([kept, doomed]),
      doomed,
    );
    ok(t, set, 'the setting was checked before the delete');
    t.equal(
      ok(t, removed, 'the delete waited for it').removed.dataAccessRoleEntries,
      1,
      'and took the id out of the role',
    );
    const { rows } = await pool.query(
      'SELECT rightsholder_ids AS ids FROM data_access_roles WHERE organization_id = $1 AND user_id = $2',
      [org, member.userId],
    );
    t.same(rows, [{ ids: [kept] }], 'no dangling id');
  },
);

t.test(
  'setRightsholderMdPriorities naming a rightsholder being deleted stores no id of a rightsholder that is gone',
  async (t) => {
    const first = await insertRightsholder(srv, org, 'First');
    const doomed = await insertRightsholder(srv, org, 'Doomed Too');
    const order = (ids: string[]) =>
      owner.client.mutate('organization.setRightsholderMdPriorities', {
        organizationId: org,
        rightsholderIds: ids,
      });
    ok(t, await order([first]));
    const { set, removed } = await raceDelete(
      'SELECT 1 FROM rightsholder_md_priorities WHERE organization_id = $1 FOR UPDATE',
      [org],
      () => order([doomed, first]),
      doomed,
    );
    ok(t, set);
    t.equal(ok(t, removed).removed.mdPriorities, 1, 'the delete waited and removed its priority');
    const { rows } = await pool.query(
      'SELECT rightsholder_id AS id, position FROM rightsholder_md_priorities WHERE organization_id = $1 ORDER BY position',
      [org],
    );
    t.same(rows, [{ id: first, position: 2 }], 'no dangling id');
    t.same(
      ok(
        t,
        await owner.client.query('organization.listRightsholderMdPriorities', {
          organizationId: org,
        }),
      ),
      [{ position: 1, rightsholderId: first, name: 'First' }],
    );
  },
);
