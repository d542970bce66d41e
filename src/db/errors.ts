// PostgreSQL errors the stores turn into the service's own.

/** A unique_violation (23505) of the named constraint. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const e = error as { code?: string; constraint?: string } | null;
  return e?.code === '23505' && e.constraint === constraint;
}
