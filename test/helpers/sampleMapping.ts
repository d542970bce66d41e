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
