import { router } from '../../trpc/init.ts';
import { create } from './create.ts';
import { deleteLens } from './delete.ts';
import { duplicate } from './duplicate.ts';
import { get } from './get.ts';
import { list } from './list.ts';
import { listTags } from './listTags.ts';
import { recordOpened } from './recordOpened.ts';
import { setPinned } from './setPinned.ts';
import { update } from './update.ts';

export const lensRouter = router({
  create,
  delete: deleteLens,
  duplicate,
  get,
  list,
  listTags,
  recordOpened,
  setPinned,
  update,
});
