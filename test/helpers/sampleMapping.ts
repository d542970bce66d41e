// A small statement layout and its mapping, for tests that need a valid one.
export const HEADER = ['Period', 'Title', 'Currency', 'Units', 'Net'];
export const fields = {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { constant: 'M' },
  currency: { column: 'Currency' },
  units: { column: 'Units' },
  royaltyEarnings: { column: 'Net' },
  rawTitle: { column: 'Title' },
};

/** A store report in euros (`Period, Store, Track, ISRC, Country, Qty, Net (EUR)`), its period's cadence read from the period. */
export const EUR_REPORT_HEADER = [
  'Period',
  'Store',
  'Track',
  'ISRC',
  'Country',
  'Qty',
  'Net (EUR)',
];
export const eurReportFields = {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { column: 'Period' },
  currency: { constant: 'EUR' },
  royaltyEarnings: { column: 'Net (EUR)' },
  units: { column: 'Qty' },
  source: { column: 'Store' },
  rawTitle: { column: 'Track' },
  isrc: { column: 'ISRC' },
  country: { column: 'Country' },
};

/** A monthly report with a currency per row and raw sales types and sources (`Period, Store, Usage, Track, Qty, Net, Currency`). */
export const CURRENCY_REPORT_HEADER = [
  'Period',
  'Store',
  'Usage',
  'Track',
  'Qty',
  'Net',
  'Currency',
];
export const currencyReportFields = {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { constant: 'M' },
  currency: { column: 'Currency' },
  royaltyEarnings: { column: 'Net' },
  units: { column: 'Qty' },
  source: { column: 'Store' },
  salesType: { column: 'Usage' },
  rawTitle: { column: 'Track' },
};

/** The least a statement needs: `Title, Amount` in euros, its period (2024-03) a constant. */
export const TITLE_AMOUNT_HEADER = ['Title', 'Amount'];
export const titleAmountFields = {
  stmtYear: { constant: '2024' },
  stmtPeriod: { constant: '3' },
  stmtCadence: { constant: 'M' },
  currency: { constant: 'EUR' },
  royaltyEarnings: { column: 'Amount' },
  rawTitle: { column: 'Title' },
};
