import { router } from '../../trpc/init.ts';
import { create } from './create.ts';
import { deleteById } from './deleteById.ts';
import { getById } from './getById.ts';
import { list } from './list.ts';
import { updateById } from './updateById.ts';

export const distributorRouter = router({ create, deleteById, getById, list, updateById });
