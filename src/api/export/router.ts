import { router } from '../../trpc/init.ts';
import { downloadFile } from './downloadFile.ts';
import { list } from './list.ts';
import { listFiles } from './listFiles.ts';
import { status } from './status.ts';
import { trigger } from './trigger.ts';

export const exportRouter = router({ trigger, list, status, listFiles, downloadFile });
