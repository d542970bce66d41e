// The name of a distributor: trimmed, 1..200 characters, no NUL (PostgreSQL text cannot hold it).
import { withoutNul } from '../../activity/inputs.ts';
import { name } from '../../trpc/schemas.ts';

export const distributorName = name(200).refine(withoutNul, 'must not contain NUL characters');
