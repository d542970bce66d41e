// The input the dataFreshness procedures (and insights) share: the rightsholders to report on.
import { z } from 'zod';

export const rightsholderIdsField = z
  .array(z.uuid())
  .max(1_000)
  .describe(
    "rightsholders to report on; ids outside the organization or the caller's data access are left out, and an empty list (like fetching.getFetchingCoverageByRightsholders) reports on none",
  );
