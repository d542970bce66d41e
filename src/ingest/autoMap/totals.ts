// The totals a statement states about itself (a footer total, a preamble line such as
// `Total Royalties,1234.56`), compared with the sums of its normalized rows to the last decimal
// the file prints: a stated 1234.57 proves a computed 1234.5689, a stated 1234.5 does not prove 1234.56.
import { readAmount } from '../amounts.ts';
import { compareDecimals, roundHalfAwayFromZero } from '../../decimal.ts';
import type { FooterMeasure, LocatedTable } from '../fileTypes.ts';
import type { FieldSpec } from '../mappingFields.ts';
import { headerIn, usesDecimalComma } from '../standardFields.ts';

export interface StatedTotal {
  where: 'footer' | 'preamble';
  label: string;
  measure: FooterMeasure;
  /** as written */
  stated: string;
}

// a preamble line that states the statement's total (not a balance, a payment or a rate)
const PREAMBLE_TOTAL =
  /^(total|grand total|statement total|total (net )?(royalties|earnings|amount|revenue|income)|net total|total due|gesamtbetrag|gesamtsumme|summe|montant total|total général)(\s*\(?[A-Z]{3}\)?)?$/i;
const PREAMBLE_UNITS = /^total (units|quantity|streams|plays)$/i;
const PREAMBLE_ROWS = /^(total rows|row count|number of (rows|lines|records))$/i;

/** Every total the file states for the mapping's money and units columns. */
export function statedTotals(
  located: LocatedTable,
  fields: { royaltyEarnings?: FieldSpec | undefined; units?: FieldSpec | undefined },
): StatedTotal[] {
  const out: StatedTotal[] = [];
  for (const total of located.footerTotals) {
    if (total.kind === 'balance') continue;
    if (total.measure && total.value !== undefined) {
      out.push({
        where: 'footer',
        label: total.label,
        measure: total.measure,
        stated: total.value,
      });
      continue;
    }
    for (const [measure, spec] of [
      ['amount', fields.royaltyEarnings],
      ['units', fields.units],
    ] as const) {
      const header = headerIn(located.header, spec?.column);
      if (header !== undefined && Object.hasOwn(total.values, header))
        out.push({ where: 'footer', label: total.label, measure, stated: total.values[header]! });
    }
  }
  for (const [key, value] of Object.entries(located.preambleValues)) {
    const k = key.trim();
    const measure: FooterMeasure | null = PREAMBLE_TOTAL.test(k)
      ? 'amount'
      : PREAMBLE_UNITS.test(k)
        ? 'units'
        : PREAMBLE_ROWS.test(k)
          ? 'rows'
          : null;
    if (measure) out.push({ where: 'preamble', label: k, measure, stated: value });
  }
  return out;
}

/** The decimals printed in a number as written (`1.234,56` with a decimal comma: 2; `1,234` with a point: 0). */
export function printedDecimals(text: string, decimalComma: boolean): number {
  const m = new RegExp(`\\${decimalComma ? ',' : '.'}(\\d+)\\D*$`).exec(text.trim());
  return m ? m[1]!.length : 0;
}

export interface TotalCheck extends StatedTotal {
  computed: string | null;
  /** the computed sum rounded to the stated total's printed decimals */
  compared: string | null;
  agrees: boolean;
}

/** Each stated total against the rows' sum of its measure, to the decimals the file prints. */
export function checkTotals(
  located: LocatedTable,
  fields: { royaltyEarnings?: FieldSpec | undefined; units?: FieldSpec | undefined },
  sums: Record<FooterMeasure, string | null>,
  decimalComma: Readonly<Record<string, boolean>>,
): TotalCheck[] {
  return statedTotals(located, fields).map((total) => {
    const spec = total.measure === 'units' ? fields.units : fields.royaltyEarnings;
    const comma = total.measure !== 'rows' && usesDecimalComma(spec, located.header, decimalComma);
    const stated = readAmount(total.stated, comma);
    const computed = sums[total.measure];
    if (stated === null || computed === null)
      return { ...total, computed, compared: null, agrees: false };
    const digits = printedDecimals(total.stated, comma);
    const compared = roundHalfAwayFromZero(computed, digits);
    return { ...total, computed, compared, agrees: compareDecimals(stated, compared) === 0 };
  });
}
