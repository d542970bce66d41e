// statement_lookup_flags (every minute): the unknown_sales_types / unknown_sources flags of
// processed statements follow the lookup tables (src/lookups/flags.ts).
import { syncLookupFlags } from '../../lookups/flags.ts';
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';

export const statementLookupFlagsTask = defineTask(
  TASK.statement_lookup_flags,
  async (_payload, { deps, helpers }) => {
    const changed = await syncLookupFlags(deps.pool);
    if (changed)
      helpers.logger.info(
        `${TASK.statement_lookup_flags}: ${changed} statement flag(s) brought up to date with the lookup tables`,
      );
  },
);
