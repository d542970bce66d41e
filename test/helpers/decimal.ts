/** Decimal text without trailing zeros, for comparing exact amounts written at different scales. */
export { decimalText as canonicalDecimal } from '../../src/analytics/engine.ts';
