// Why a statement was not mapped automatically: one reason per field or check that failed, each
// naming the field, the column and the rows (a count, and the record numbers of sampled rows
// where known) a user must look at. Stored with the suggestion (statements.suggested_mapping).
import type { StandardField } from '../mappingFields.ts';

export type AutoMapReasonCode =
  | 'field_uncertain'
  | 'field_ambiguous'
  | 'field_missing'
  | 'date_order_undecided'
  | 'values_unreadable'
  | 'values_missing'
  | 'no_data_rows'
  | 'total_mismatch'
  | 'conflicting_facts'
  | 'not_readable';

export interface AutoMapReason {
  code: AutoMapReasonCode;
  message: string;
  field?: StandardField;
  column?: string;
  /** how many rows the reason concerns */
  rows?: number;
  /** 1-based data records (below the header) of sampled rows that show it */
  examples?: number[];
  details?: Record<string, unknown>;
}
