// The changes to lenses, each with its activity event in the same transaction: pass the
// transaction's client as `db`. Events about a personal lens are visible to its owner alone,
// and a pin is the pinning member's own business, so its event is theirs alone too.
import { diffFields, recordActivity, type FieldChanges } from '../activity/record.ts';
import { deleteVisits, recordVisit } from '../activity/visits.ts';
import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import {
  deleteLens,
  getLens,
  insertLens,
  setPin,
  uniqueTags,
  updateLens,
  type Lens,
  type LensFields,
  type LensScope,
  type LensViewer,
} from './store.ts';

type Actor = Pick<Principal, 'userId' | 'apiKey'>;

const changeableFields = [
  'name',
  'description',
  'scope',
  'tags',
  'viewName',
  'payload',
] as const satisfies readonly (keyof LensFields)[];

async function record(
  db: Queryable,
  actor: Actor,
  lens: Lens,
  action: string,
  changes: FieldChanges | null = null,
  privateTo?: string,
) {
  await recordActivity(db, actor, {
    organizationId: lens.organizationId,
    action,
    subjectType: 'lens',
    subjectId: lens.id,
    subjectLabel: lens.name,
    changes,
    visibleToUserId: privateTo ?? (lens.scope === 'personal' ? lens.ownerUserId : null),
  });
}

/** JSON with every object's keys sorted, so two values equal as jsonb serialize the same. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
            a < b ? -1 : a > b ? 1 : 0,
          ),
        )
      : v,
  );
}

function fieldsOf(lens: Lens): LensFields {
  return {
    name: lens.name,
    description: lens.description,
    scope: lens.scope,
    tags: lens.tags,
    kind: lens.kind,
    viewName: lens.viewName,
    payload: lens.payload,
  };
}

export async function create(
  db: Queryable,
  actor: Actor,
  viewer: LensViewer,
  fields: LensFields,
): Promise<Lens> {
  const lens = await insertLens(db, viewer, fields);
  await record(db, actor, lens, 'lens.create');
  return lens;
}

/** Applies the given fields (undefined: unchanged; null clears description and viewName). */
export async function update(
  db: Queryable,
  actor: Actor,
  viewer: LensViewer,
  id: string,
  patch: Partial<LensFields>,
): Promise<Lens> {
  const current = await getLens(db, viewer, id, { lock: true });
  const before = fieldsOf(current);
  const after: LensFields = { ...before };
  for (const field of changeableFields) {
    // jsonb keeps keys in its own order: the same value sent back in the client's order is no change
    if (patch[field] !== undefined && canonicalJson(patch[field]) !== canonicalJson(before[field]))
      (after as Record<string, unknown>)[field] = patch[field];
  }
  // Making an organization lens personal takes it away from everybody else: only its owner may.
  if (
    after.scope === 'personal' &&
    current.scope !== 'personal' &&
    current.ownerUserId !== viewer.userId
  )
    throw new AppError('LENS_NOT_OWNER');
  const changes = diffFields(before, after, changeableFields);
  if (!changes) return current;
  const updated = await updateLens(db, viewer, id, after);
  await record(db, actor, updated, 'lens.update', changes);
  return updated;
}

export async function remove(
  db: Queryable,
  actor: Actor,
  viewer: LensViewer,
  id: string,
): Promise<{ id: string; deleted: true }> {
  const lens = await getLens(db, viewer, id, { lock: true });
  // the stored id, not the one given: a uuid may arrive in capitals, visits are keyed by text
  await deleteVisits(db, viewer.organizationId, 'lens', lens.id);
  await deleteLens(db, viewer.organizationId, lens.id);
  await record(db, actor, lens, 'lens.delete');
  return { id: lens.id, deleted: true };
}

const COPY_SUFFIX = ' (copy)';
const MAX_NAME = 200;

/** "<name> (copy)" within MAX_NAME UTF-16 units, never cutting a character in half (a lone surrogate would be stored as U+FFFD). */
export function copyName(name: string): string {
  let end = Math.min(name.length, MAX_NAME - COPY_SUFFIX.length);
  const last = name.charCodeAt(end - 1);
  if (end < name.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return name.slice(0, end).trimEnd() + COPY_SUFFIX;
}

export async function duplicate(
  db: Queryable,
  actor: Actor,
  viewer: LensViewer,
  id: string,
  opts: { name?: string | undefined; scope?: LensScope | undefined },
): Promise<Lens> {
  const source = await getLens(db, viewer, id);
  const copy = await insertLens(db, viewer, {
    ...fieldsOf(source),
    // a lens stored before tags were compared without case may carry `x` and `X`
    tags: uniqueTags(source.tags),
    name: opts.name ?? copyName(source.name),
    scope: opts.scope ?? source.scope,
  });
  await record(db, actor, copy, 'lens.duplicate');
  return copy;
}

export async function setPinned(
  db: Queryable,
  actor: Actor,
  viewer: LensViewer,
  id: string,
  pinned: boolean,
): Promise<Lens> {
  const current = await getLens(db, viewer, id, { lock: true });
  if (current.pinned === pinned) return current;
  await setPin(db, viewer.userId, id, pinned);
  await record(
    db,
    actor,
    current,
    'lens.setPinned',
    { pinned: { before: current.pinned, after: pinned } },
    viewer.userId,
  );
  return { ...current, pinned };
}

/** A visit, not an activity event: see activity/visits.ts. */
export async function recordOpened(db: Queryable, viewer: LensViewer, id: string): Promise<Lens> {
  const lens = await getLens(db, viewer, id);
  const visit = await recordVisit(db, {
    ...viewer,
    subjectType: 'lens',
    subjectId: lens.id,
    subjectLabel: lens.name,
  });
  return { ...lens, lastOpenedAt: visit.lastVisitedAt };
}
