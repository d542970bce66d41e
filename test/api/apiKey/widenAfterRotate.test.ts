// A call made with an API key never yields more than that key grants. Rotating another key of
// the same user hands out its secret only when its scope lies within the calling key's; the
// calling key must not then widen that key, now in its holder's hands, beyond what either key
// already granted: a key limited to apiKey.update would otherwise turn into '*' in two calls.
import t from 'tap';
import { createApiKey } from '../../../src/auth/apiKeys.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Widening');
const org = owner.organizationId;
const patternsOf = async (id: string) =>
  (await srv.deps.pool.query('SELECT procedure_patterns AS p FROM api_keys WHERE id = $1', [id]))
    .rows[0].p;

t.test(
  "a narrow key rotates the user's other key, then cannot widen it past either key's scope",
  async (t) => {
    const narrow = await createApiKey(srv.deps.pool, {
      userId: owner.userId,
      name: 'narrow',
      organizationIds: [org],
      patterns: ['apiKey.update'],
    });
    const other = await createApiKey(srv.deps.pool, {
      userId: owner.userId,
      name: 'lister',
      organizationIds: [org],
      patterns: ['lens.list'],
    });
    const asNarrow = srv.client({ 'x-api-key': narrow.key, 'x-organization-id': org });

    // the other key's secret: allowed, once its patterns lie within the calling key's
    const rotated = await asNarrow.mutate('apiKey.update', {
      organizationId: org,
      id: other.record.id,
      rotate: true,
      patterns: ['apiKey.update'],
    });
    t.equal(rotated.ok, true, JSON.stringify(rotated.error));
    const secret = rotated.data.key as string;

    // widening it now would hand its holder every procedure
    const widened = await asNarrow.mutate('apiKey.update', {
      organizationId: org,
      id: other.record.id,
      rotate: false,
      patterns: ['*'],
    });
    t.equal(widened.ok, false);
    t.same(
      [widened.error?.data.code, widened.error?.data.errorCode],
      ['FORBIDDEN', 'API_KEY_SCOPE_DENIED'],
    );
    t.same(await patternsOf(other.record.id), ['apiKey.update'], 'unchanged');
    const asOther = srv.client({ 'x-api-key': secret, 'x-organization-id': org });
    const probe = await asOther.query('organization.getById', { organizationId: org });
    t.same(
      [probe.ok, probe.error?.data.errorCode],
      [false, 'API_KEY_SCOPE_DENIED'],
      'the rotated key reaches no further than before',
    );
    // nor back to what it had before the calling key narrowed it: that is past the calling key's scope too
    const restored = await asNarrow.mutate('apiKey.update', {
      organizationId: org,
      id: other.record.id,
      rotate: false,
      patterns: ['apiKey.update', 'lens.list'],
    });
    t.equal(restored.ok, false, 'lens.list is neither key’s now');
  },
);

t.test(
  'renaming, narrowing, or keeping patterns the target or the calling key already grants stays possible',
  async (t) => {
    const narrow = await createApiKey(srv.deps.pool, {
      userId: owner.userId,
      name: 'narrow2',
      organizationIds: [org],
      patterns: ['apiKey.update', 'rightsholder.list'],
    });
    const wide = await createApiKey(srv.deps.pool, {
      userId: owner.userId,
      name: 'wide',
      organizationIds: [org],
      patterns: ['*'],
    });
    const asNarrow = srv.client({ 'x-api-key': narrow.key, 'x-organization-id': org });
    const renamed = await asNarrow.mutate('apiKey.update', {
      organizationId: org,
      id: wide.record.id,
      rotate: false,
      name: 'renamed',
    });
    t.match(renamed.ok && renamed.data, { name: 'renamed', key: null, patterns: ['*'] });
    const narrowed = await asNarrow.mutate('apiKey.update', {
      organizationId: org,
      id: wide.record.id,
      rotate: false,
      patterns: ['cube.*', 'lens.*'],
    });
    t.match(
      narrowed.ok && narrowed.data,
      { key: null, patterns: ['cube.*', 'lens.*'] },
      'narrowing a wider key',
    );
    const mixed = await asNarrow.mutate('apiKey.update', {
      organizationId: org,
      id: wide.record.id,
      rotate: false,
      patterns: ['cube.*', 'rightsholder.list'],
    });
    t.match(
      mixed.ok && mixed.data,
      { patterns: ['cube.*', 'rightsholder.list'] },
      "one of its own patterns and one of the calling key's",
    );
    // through a credential of full scope anything goes, as before
    const full = await owner.client.mutate('apiKey.update', {
      organizationId: org,
      id: wide.record.id,
      rotate: false,
      patterns: ['*'],
    });
    t.match(full.ok && full.data, { patterns: ['*'] });
  },
);
