import { router } from '../../trpc/init.ts';
import { batchResolveWithAI } from './batchResolveWithAI.ts';
import { create } from './create.ts';
import { deleteEntry } from './delete.ts';
import { getSalesTypeLookup } from './getSalesTypeLookup.ts';
import { list } from './list.ts';
import { missingSalesTypes } from './missingSalesTypes.ts';
import { resolveWithAI } from './resolveWithAI.ts';
import { update } from './update.ts';

export const lookupSalesTypeRouter = router({
  batchResolveWithAI,
  create,
  delete: deleteEntry,
  getSalesTypeLookup,
  list,
  missingSalesTypes,
  resolveWithAI,
  update,
});
