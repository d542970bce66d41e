// How a normalizer run ends other than with rows: each is answered as its errorCode by
// normalizeStatement (workers/normalize.ts), or makes it run again (FormatSwitch).

/** The mapping names a column the statement does not have (MAPPING_COLUMN_MISSING). */
export class MappingError extends Error {}
/** A computed amount's formula the normalizer cannot compute (MAPPING_FORMULA_INVALID). */
export class FormulaError extends Error {}
/** Year-first dates that read both ways with nothing in the statement to tell which (DATE_ORDER_AMBIGUOUS). */
export class DateOrderError extends Error {}
/** A field whose numbers no one rule reads (AMOUNT_FORMAT_CONFLICT): the offending rows in `details`. */
export class AmountFormatError extends Error {
  constructor(
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}
/** A column whose every number fits the other rule than the file reader's: the run starts again reading it so. */
export class FormatSwitch extends Error {
  constructor(
    readonly header: string,
    readonly decimalComma: boolean,
  ) {
    super(`column ${header} reads with a decimal ${decimalComma ? 'comma' : 'point'}`);
  }
}
/** The normalizer ran past its time budget (the statement fails with INGEST_TIME_BUDGET_EXCEEDED). */
export class BudgetSpent extends Error {
  override message = 'Interrupted: the time budget is spent';
}
