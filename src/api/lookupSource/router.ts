import { router } from '../../trpc/init.ts';
import { batchResolveWithAI } from './batchResolveWithAI.ts';
import { create } from './create.ts';
import { deleteEntry } from './delete.ts';
import { getSourceLookup } from './getSourceLookup.ts';
import { list } from './list.ts';
import { missingSources } from './missingSources.ts';
import { ragCreate } from './ragCreate.ts';
import { ragDelete } from './ragDelete.ts';
import { ragList } from './ragList.ts';
import { ragUpdate } from './ragUpdate.ts';
import { resolveWithAI } from './resolveWithAI.ts';
import { update } from './update.ts';

export const lookupSourceRouter = router({
  batchResolveWithAI,
  create,
  delete: deleteEntry,
  getSourceLookup,
  list,
  missingSources,
  ragCreate,
  ragDelete,
  ragList,
  ragUpdate,
  resolveWithAI,
  update,
});
