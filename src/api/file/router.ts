import { router } from '../../trpc/init.ts';
import { deleteFilesByIds } from './deleteFilesByIds.ts';
import { getFilesDeleteInfo } from './getFilesDeleteInfo.ts';
import { list } from './list.ts';

export const fileRouter = router({ deleteFilesByIds, getFilesDeleteInfo, list });
