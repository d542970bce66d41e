import { router } from '../../trpc/init.ts';
import { batchUpdate } from './batchUpdate.ts';
import { create } from './create.ts';
import { deleteById } from './deleteById.ts';
import { getById } from './getById.ts';
import { list } from './list.ts';
import { trackOpen } from './trackOpen.ts';
import { updateById } from './updateById.ts';

export const rightsholderRouter = router({
  batchUpdate,
  create,
  deleteById,
  getById,
  list,
  trackOpen,
  updateById,
});
