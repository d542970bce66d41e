import { listSourceLookups, sourceSorts } from '../../lookups/sources.ts';
import { lookupListProcedure } from '../lookupList.ts';

export const list = lookupListProcedure(
  'Source lookup entries; search matches the original and every resolved field; status filters (one or several). Sorted by original unless pagination.sortBy says otherwise.',
  sourceSorts,
  listSourceLookups,
);
