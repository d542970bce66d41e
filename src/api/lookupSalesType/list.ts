import { listSalesTypeLookups, salesTypeSorts } from '../../lookups/salesTypes.ts';
import { lookupListProcedure } from '../lookupList.ts';

export const list = lookupListProcedure(
  'Sales-type lookup entries; search matches original, cleansed and sales types; status filters (one or several). Sorted by original unless pagination.sortBy says otherwise.',
  salesTypeSorts,
  listSalesTypeLookups,
);
