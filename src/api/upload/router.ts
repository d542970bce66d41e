import { router } from '../../trpc/init.ts';
import { aborted } from './aborted.ts';
import { callback } from './callback.ts';
import { resolveAllFlags, resolveFlag, setFlagShown } from './flags.ts';
import { heartbeat } from './heartbeat.ts';
import { list } from './list.ts';
import { statements } from './statements.ts';
import { uploadAction } from './uploadAction.ts';
import { uploadFile } from './uploadFile.ts';

export const uploadRouter = router({
  aborted,
  callback,
  heartbeat,
  list,
  resolveAllFlags,
  resolveFlag,
  setFlagShown,
  statements,
  uploadAction,
  uploadFile,
});
