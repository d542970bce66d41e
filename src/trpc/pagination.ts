// Procedures read the pagination envelope from here; its home is src/pagination.ts, below the
// domain modules that page their lists too.
export * from '../pagination.ts';
