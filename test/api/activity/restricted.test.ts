// A member restricted to some rightsholders sees in the activity log only events whose
// rightsholders they may all see: files, uploads, exports, data-access roles and priorities that
// name another rightsholder stay hidden, in the feed and in a subject's history.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createRightsholder } from '../rightsholder/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Split Label');
const org = owner.organizationId;
const mine = await createRightsholder(t, owner, 'Mine Artist');
const hidden = await createRightsholder(t, owner, 'Hidden Artist');
const restricted = await addMember(srv, org, 'admin');
ok(
  t,
  await owner.client.mutate('user.setDataAccessRole', {
    organizationId: org,
    userId: restricted.userId,
    role: { mode: 'restricted', rightsholderIds: [mine.id] },
  }),
);

const feed = async (caller: typeof owner) =>
  ok(t, await caller.client.query('activity.feed', { organizationId: org, limit: 2000 }))
    .data as any[];

/** an upload of one file for the rightsholder, then abandoned and removed: upload and file events */
async function fileEvents(
  rightsholderId: string,
  fileName: string,
): Promise<{ uploadId: string; statementId: string }> {
  const up = ok(
    t,
    await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId,
      fileName,
    }),
  );
  ok(
    t,
    await owner.client.mutate('upload.aborted', {
      organizationId: org,
      statementId: up.statementId,
    }),
  );
  ok(
    t,
    await owner.client.mutate('file.deleteFilesByIds', {
      organizationId: org,
      uploadId: up.uploadId,
      fileIds: [up.statementId],
    }),
  );
  return up;
}

t.test('the feed leaves out events naming a rightsholder the member may not see', async (t) => {
  const seenUp = await fileEvents(mine.id, 'mine.csv');
  const hiddenUp = await fileEvents(hidden.id, 'hidden-secret.csv');
  const mineExport = ok(
    t,
    await owner.client.mutate('export.trigger', {
      organizationId: org,
      type: 'royalty_lines',
      format: 'csv',
      rightsholderIds: [mine.id],
    }),
  );
  const hiddenExport = ok(
    t,
    await owner.client.mutate('export.trigger', {
      organizationId: org,
      type: 'royalty_lines',
      format: 'csv',
      rightsholderIds: [mine.id, hidden.id],
    }),
  );
  ok(
    t,
    await owner.client.mutate('organization.setRightsholderMdPriorities', {
      organizationId: org,
      rightsholderIds: [hidden.id, mine.id],
    }),
  );
  const writer = await addMember(srv, org, 'writer');
  ok(
    t,
    await owner.client.mutate('user.setDataAccessRole', {
      organizationId: org,
      userId: writer.userId,
      role: { mode: 'restricted', rightsholderIds: [hidden.id] },
    }),
  );
  ok(
    t,
    await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: hidden.id,
      name: 'Hidden Artist Renamed',
    }),
  );

  const everything = await feed(owner);
  const seen = await feed(restricted);
  const key = (e: any) => `${e.action} ${e.subjectType} ${e.subjectLabel ?? ''}`;
  // the owner sees all of it
  for (const id of [
    seenUp.statementId,
    hiddenUp.statementId,
    seenUp.uploadId,
    hiddenUp.uploadId,
    mineExport.exportId,
    hiddenExport.exportId,
  ]) {
    t.ok(
      everything.some((e) => e.subjectId === id),
      `the owner sees ${id}`,
    );
  }
  t.ok(everything.some((e) => e.action === 'organization.setRightsholderMdPriorities'));
  // the restricted member: their rightsholder's files, upload and export; nothing naming the other
  t.same(
    seen
      .filter((e) =>
        [seenUp.statementId, seenUp.uploadId, mineExport.exportId].includes(e.subjectId),
      )
      .map(key)
      .sort(),
    [
      'export.trigger export royalty_lines (csv)',
      'file.deleteFilesByIds file mine.csv',
      'upload.aborted file mine.csv',
      'upload.uploadFile upload mine.csv',
    ].sort(),
  );
  const leaked = seen.filter(
    (e) => JSON.stringify(e).includes(hidden.id) || /hidden/i.test(JSON.stringify(e)),
  );
  t.same(leaked.map(key), [], 'no event names the hidden rightsholder or its files');
  t.notOk(
    seen.some((e) => e.subjectId === hiddenExport.exportId),
    'an export naming both is hidden',
  );
  t.notOk(seen.some((e) => e.action === 'organization.setRightsholderMdPriorities'));
  t.notOk(seen.some((e) => e.action === 'user.setDataAccessRole' && e.subjectId === writer.userId));
  // their own restriction names only their rightsholder: they see it
  t.ok(
    seen.some((e) => e.action === 'user.setDataAccessRole' && e.subjectId === restricted.userId),
  );

  // a subject's history: the same rule, and a subject with nothing visible is NOT_FOUND
  isError(
    t,
    await restricted.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'export',
      subjectId: hiddenExport.exportId,
    }),
    'NOT_FOUND',
    'ACTIVITY_SUBJECT_NOT_FOUND',
  );
  isError(
    t,
    await restricted.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'file',
      subjectId: hiddenUp.statementId,
    }),
    'NOT_FOUND',
    'ACTIVITY_SUBJECT_NOT_FOUND',
  );
  const own = ok(
    t,
    await restricted.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'file',
      subjectId: seenUp.statementId,
    }),
  );
  t.same(
    own.data.map((e: any) => e.action),
    ['file.deleteFilesByIds', 'upload.aborted'],
  );
  const theirs = ok(
    t,
    await owner.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'export',
      subjectId: hiddenExport.exportId,
    }),
  );
  t.same(
    theirs.data.map((e: any) => e.action),
    ['export.trigger'],
  );
});
