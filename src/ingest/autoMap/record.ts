// What a statement's record keeps of the automatic mapping its run created and proved
// (MappingMatch.automatic in src/ingest/library.ts, the `auto_mapped` flag's details).
import type { StandardField } from '../mappingFields.ts';
import type { StatementFacts } from './facts.ts';
import type { Proof } from './proof.ts';

export interface AutoMapRecord {
  /** per field, the confidence it was taken with and why */
  basis: Partial<Record<StandardField, { confidence: number; why: string }>>;
  /** fields of the suggestion left out as too uncertain */
  leftOut: StandardField[];
  facts: StatementFacts;
  proof: Pick<Proof, 'rows' | 'net' | 'units' | 'totals'>;
}
