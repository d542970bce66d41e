// The procedures of the app router as types: their dotted paths, which are queries and which
// mutations, their inputs and their answers as the wire carries them (JSON: dates as strings).
// Test clients at both depths (test/helpers/trpc.ts over HTTP, test/helpers/handler.ts in
// process) are typed from these, so `tsc` checks procedure names and the fields tests read.
import type {
  AnyTRPCProcedure,
  AnyTRPCRouter,
  inferProcedureInput,
  inferTransformedProcedureOutput,
} from '@trpc/server';
import type { AppRouter } from '../../src/api/index.ts';

type Entries<R, Prefix extends string = ''> = {
  [K in keyof R & string]: R[K] extends AnyTRPCProcedure
    ? { path: `${Prefix}${K}`; procedure: R[K] }
    : R[K] extends AnyTRPCRouter
      ? Entries<R[K]['_def']['record'], `${Prefix}${K}.`>
      : R[K] extends object
        ? Entries<R[K], `${Prefix}${K}.`>
        : never;
}[keyof R & string];

/** every procedure by its dotted path ('lens.get') */
export type Procedures = {
  [E in Entries<AppRouter['_def']['record']> as E['path']]: E['procedure'];
};
export type ProcedurePath = keyof Procedures & string;
export type QueryPath = {
  [P in ProcedurePath]: Procedures[P]['_def']['type'] extends 'query' ? P : never;
}[ProcedurePath];
export type MutationPath = {
  [P in ProcedurePath]: Procedures[P]['_def']['type'] extends 'mutation' ? P : never;
}[ProcedurePath];

export type InputOf<P extends ProcedurePath> = inferProcedureInput<Procedures[P]>;
/** the answer as a client reads it: JSON (no transformer), so dates are strings */
export type OutputOf<P extends ProcedurePath> = inferTransformedProcedureOutput<
  AppRouter,
  Procedures[P]
>;
/** the input argument: optional where the procedure takes none or an optional one */
export type InputArg<P extends ProcedurePath> =
  undefined extends InputOf<P> ? [input?: InputOf<P>] : [input: InputOf<P>];

/** the names of one namespace's queries, without the namespace ('get' of 'lens.get') */
export type QueryName<NS extends string> = QueryPath extends infer P
  ? P extends `${NS}.${infer N}`
    ? N
    : never
  : never;
export type MutationName<NS extends string> = MutationPath extends infer P
  ? P extends `${NS}.${infer N}`
    ? N
    : never
  : never;
