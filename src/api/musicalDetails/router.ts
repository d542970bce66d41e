import { router } from '../../trpc/init.ts';
import { bulkOverride } from './bulkOverride.ts';
import { executeQuery } from './executeQuery.ts';
import { getDistinctTargetProviders } from './getDistinctTargetProviders.ts';
import { getDistinctTargetTypes } from './getDistinctTargetTypes.ts';
import { getMusicalDetails } from './getMusicalDetails.ts';
import { ignoreTitles } from './ignoreTitles.ts';
import { updateResults } from './updateResults.ts';

export const musicalDetailsRouter = router({
  bulkOverride,
  executeQuery,
  getDistinctTargetProviders,
  getDistinctTargetTypes,
  getMusicalDetails,
  ignoreTitles,
  updateResults,
});
