import { router } from '../../trpc/init.ts';
import { downloadStatementFile } from './downloadStatementFile.ts';
import { getSample } from './getSample.ts';

export const fileStorageRouter = router({ downloadStatementFile, getSample });
