// Procedures read the input building blocks from here; their home is src/schemas.ts, below the
// domain modules that define inputs too.
export * from '../schemas.ts';
