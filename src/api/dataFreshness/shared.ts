import { z } from 'zod';

export const rightsholderIdsField = z
  .array(z.uuid())
  .min(1)
  .max(1_000)
  .describe('rightsholders to report on; ids outside the organization or the caller\'s data access are left out');
