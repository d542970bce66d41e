// Rightsholders as the commands name them: by id, or by exact name.
import type { RoyaltyClient } from '../client/index.ts';
import { UsageError } from './output.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Rightsholders named by id or by exact name (case-insensitive); none named: every visible one. */
export async function resolveRightsholders(
  client: RoyaltyClient,
  named: string[] | undefined,
): Promise<string[]> {
  const organizationId = client.org();
  const all: { id: string; name: string }[] = [];
  const needList = !named || named.length === 0 || named.some((n) => !UUID.test(n));
  if (needList)
    for await (const r of client.paginate(
      client.api.rightsholder.list.query,
      { organizationId },
      2000,
    ))
      all.push(r);
  if (!named || named.length === 0) {
    if (all.length === 0) throw new UsageError('The organization has no rightsholder yet');
    return all.map((r) => r.id);
  }
  return named.map((n) => {
    if (UUID.test(n)) return n.toLowerCase();
    const matches = all.filter((r) => r.name.toLowerCase() === n.toLowerCase());
    if (matches.length === 1) return matches[0]!.id;
    throw new UsageError(
      matches.length === 0
        ? `No rightsholder named ${n} (royalty rightsholders lists them)`
        : `${matches.length} rightsholders are named ${n}: give the id`,
    );
  });
}
