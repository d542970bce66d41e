import { router } from '../../trpc/init.ts';
import { batchUpdate } from './batchUpdate.ts';
import { create } from './create.ts';
import { deleteById } from './deleteById.ts';
import { getByDistributor } from './getByDistributor.ts';
import { getById } from './getById.ts';
import { getMapping } from './getMapping.ts';
import { list } from './list.ts';
import { processSample } from './processSample.ts';
import { redrivePreview } from './redrivePreview.ts';
import { listByMapping } from './revision/listByMapping.ts';
import { updateById } from './updateById.ts';

export const mappingRouter = router({
  batchUpdate,
  create,
  deleteById,
  getByDistributor,
  getById,
  getMapping,
  list,
  processSample,
  redrivePreview,
  revision: router({ listByMapping }),
  updateById,
});
