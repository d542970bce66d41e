// The standard fields of a normalized statement row, how each is read, and how header names
// compare: without zod, so the normalizer's thread does not load it (src/ingest/mappingFields.ts has the
// mapping schema and re-exports these).
import { normalizeHeaderCell } from './headerHash.ts';

export const standardFields = [
  'stmtYear',
  'stmtPeriod',
  'stmtCadence',
  'currency',
  'royaltyEarnings',
  'grossRoyaltyEarnings',
  'salesPeriodStart',
  'salesPeriodEnd',
  'salesType',
  'subSalesType',
  'source',
  'subSource',
  'units',
  'country',
  'typeOfRight',
  'accountNumber',
  'accountName',
  'legalVendor',
  'territoryDeduction',
  'taxDeduction',
  'royaltyRate',
  'otherAdjustments',
  'rawTitle',
  'rawArtist',
  'rawReleaseTitle',
  'rawReleaseArtist',
  'composers',
  'isrc',
  'upc',
  'iswc',
  'otherIdentifier',
  'payor',
] as const;
export type StandardField = (typeof standardFields)[number];

/** The five fields every mapping must give (the required fields of mapping.processSample). */
export const requiredFields = [
  'stmtYear',
  'stmtPeriod',
  'stmtCadence',
  'currency',
  'royaltyEarnings',
] as const satisfies readonly StandardField[];

/** How a field's values are read. */
export const fieldKinds: Record<
  StandardField,
  | 'period'
  | 'cadence'
  | 'currency'
  | 'amount'
  | 'quantity'
  | 'percent'
  | 'date'
  | 'country'
  | 'isrc'
  | 'upc'
  | 'iswc'
  | 'text'
> = {
  stmtYear: 'period',
  stmtPeriod: 'period',
  stmtCadence: 'cadence',
  currency: 'currency',
  royaltyEarnings: 'amount',
  grossRoyaltyEarnings: 'amount',
  salesPeriodStart: 'date',
  salesPeriodEnd: 'date',
  salesType: 'text',
  subSalesType: 'text',
  source: 'text',
  subSource: 'text',
  units: 'quantity',
  country: 'country',
  typeOfRight: 'text',
  accountNumber: 'text',
  accountName: 'text',
  legalVendor: 'text',
  territoryDeduction: 'percent',
  taxDeduction: 'percent',
  royaltyRate: 'amount',
  otherAdjustments: 'text',
  rawTitle: 'text',
  rawArtist: 'text',
  rawReleaseTitle: 'text',
  rawReleaseArtist: 'text',
  composers: 'text',
  isrc: 'isrc',
  upc: 'upc',
  iswc: 'iswc',
  otherIdentifier: 'text',
  payor: 'text',
};

/** Header names compare as the header hash reads them: trimmed, case-insensitively, white space collapsed, zero-width characters dropped. */
export function headerKey(name: string): string {
  return normalizeHeaderCell(name);
}

/** The file's own header cell for a column a mapping names (in any case or spacing), if it has one. */
export function headerIn(
  header: readonly string[],
  column: string | undefined,
): string | undefined {
  if (column === undefined) return undefined;
  const key = headerKey(column);
  return header.find((h) => headerKey(h) === key);
}

/**
 * Whether a field's numbers use a decimal comma: its mapping format says so, else what the file
 * reader found for its (first) column.
 */
export function usesDecimalComma(
  spec:
    | {
        format?: string | undefined;
        column?: string | undefined;
        columns?: string[] | undefined;
        multiply?: string[] | undefined;
      }
    | undefined,
  header: readonly string[],
  decimalComma: Readonly<Record<string, boolean>>,
): boolean {
  if (spec?.format === 'decimal_comma' || spec?.format === 'decimal_point')
    return spec.format === 'decimal_comma';
  const comma = (column: string | undefined) => {
    const cell = headerIn(header, column);
    return cell !== undefined && Object.hasOwn(decimalComma, cell) && decimalComma[cell] === true;
  };
  // a computed amount's factors are read by one rule: a decimal comma when either shows one
  if (spec?.multiply !== undefined) return spec.multiply.some(comma);
  return comma(spec?.column ?? spec?.columns?.[0]);
}
