// Amounts computed by the mapping (multiply: Units × Royalty Price, older Apple sales reports),
// read in this thread as the pipeline's normalizer reads them: exact decimals per row (a return's
// negative units, a blank price that leaves no amount, a product too large to be one), the
// formula on every row of the standardized variant, the formula's rule checks, and the automatic
// mapping's draft and proof of such a layout.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { formulaProblem } from '../../src/ingest/mappingFields.ts';
import { suggestMapping } from '../../src/ingest/suggest.ts';
import { draftAutoMapping } from '../../src/ingest/autoMap/draft.ts';
import { proveMapping } from '../../src/ingest/autoMap/proof.ts';
import { statementFacts } from '../../src/ingest/autoMap/facts.ts';
import { normalizeFile, parquetRows, workDir } from '../helpers/normalize.ts';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { repoRoot } from '../setup/paths.ts';

const computed = {
  royaltyEarnings: { multiply: ['Units', 'Royalty Price'] },
  units: { column: 'Units' },
  currency: { column: 'Royalty Currency' },
  stmtYear: { constant: '2010' },
  stmtPeriod: { constant: '6' },
  stmtCadence: { constant: 'M' },
};
const tsv = (rows: string[][]) =>
  ['Title\tUnits\tRoyalty Price\tRoyalty Currency', ...rows.map((r) => r.join('\t'))].join('\n');

t.test('each row is units × price, exactly; a blank price or units leaves no amount', async (t) => {
  const { out, outPath } = await normalizeFile(
    t,
    tsv([
      ['a', '3', '0.70', 'USD'], // 2.0999999999999996 in floating point
      ['b', '-1', '0.70', 'USD'], // a return
      ['c', '7', '', 'USD'], // no price: no amount, never 0
      ['d', '', '0.91', 'USD'], // no units: no amount
      ['e', '12', '0.6993', 'USD'],
      ['f', '1', '0.0000000000015', 'USD'], // rounded half away from zero to 12 decimals
      ['g', '100000000', '100000000', 'USD'], // 10^16: no amount reads so large
    ]),
    computed,
  );
  const rows = await parquetRows(outPath, 'royalty_earnings::VARCHAR, units::VARCHAR');
  t.same(
    rows.map((r) => (r[0] === null ? null : canonicalDecimal(String(r[0])))),
    ['2.1', '-0.7', null, null, '8.3916', '0.000000000002', null],
    'per row, to the last decimal',
  );
  t.equal(canonicalDecimal(out.net!), canonicalDecimal('9.791600000002'), 'the sum, exact');
  t.equal(out.issues.missingAmounts, 2, 'the blank price and the blank units');
  t.equal(out.issues.invalidAmounts, 1, 'the product too large to be an amount');
  // the standardized variant, made on request as src/ingest/variants.ts makes it
  const standardizedPath = path.join(await workDir(t), 'standardized.csv');
  await normalizeFile(
    t,
    tsv([
      ['a', '3', '0.70', 'USD'],
      ['b', '-1', '0.70', 'USD'],
    ]),
    computed,
    {
      extra: { outPath: null, removedPath: null, standardizedPath, variantsOnly: true },
    },
  );
  const standardized = (await readFile(standardizedPath, 'utf8')).trim().split('\n');
  t.match(standardized[0], /royaltyEarnings/);
  t.match(standardized[1], '3 × 0.70 (Units × Royalty Price)', 'each row shows its formula');
  t.match(standardized[2], '-1 × 0.70 (Units × Royalty Price)');
});

t.test('a decimal comma price is read by its rule', async (t) => {
  const { out } = await normalizeFile(
    t,
    tsv([
      ['a', '3', '0,70', 'EUR'],
      ['b', '2', '1,25', 'EUR'],
    ]),
    computed,
  );
  t.equal(canonicalDecimal(out.net!), '4.6');
});

t.test('a formula must be two different columns of an amount field', async (t) => {
  t.equal(formulaProblem('royaltyEarnings', { multiply: ['Units', 'Royalty Price'] }), null);
  t.match(formulaProblem('isrc', { multiply: ['Units', 'Royalty Price'] }), /only royaltyEarnings/);
  t.match(formulaProblem('royaltyEarnings', { multiply: ['Units'] }), /exactly two columns/);
  t.match(formulaProblem('royaltyEarnings', { multiply: ['Units', ' units '] }), /different/);
  t.match(
    formulaProblem('grossRoyaltyEarnings', { multiply: ['Units', 'Price'], format: 'MDY' }),
    /decimal_point or decimal_comma/,
  );
  await t.rejects(
    normalizeFile(t, tsv([['a', '1', '1', 'USD']]), {
      ...computed,
      isrc: { multiply: ['Units', 'Royalty Price'] },
    }),
    /only royaltyEarnings/,
    'the normalizer refuses it too (a stored mapping from before the rule)',
  );
});

t.test('an unseen Apple sales report: the draft computes the amount, the proof', async (t) => {
  const file = path.join(repoRoot, 'fixtures', 'statements', 'unseen', 'S_M_80012345_201006.txt');
  const text = await readFile(file, 'utf8');
  const prove = async (content: string) => {
    const { located } = await normalizeFile(t, content, computed, {
      fileName: path.basename(file),
    });
    const facts = statementFacts(located.preambleValues, path.basename(file));
    const suggestion = suggestMapping(located.header, located.sampleRows, path.basename(file));
    const draft = draftAutoMapping(suggestion, located, facts);
    const { out } = await normalizeFile(t, content, draft.fields, {
      fileName: path.basename(file),
    });
    return { draft, proof: proveMapping(out, located, draft.fields, draft.basis) };
  };
  const { draft, proof } = await prove(text);
  t.same(draft.reasons, []);
  t.same(draft.fields.royaltyEarnings, { multiply: ['Units', 'Royalty Price'] });
  t.ok(draft.leftOut.includes('royaltyRate'), 'the price is not also a rate');
  t.same(proof.reasons, [], 'proven');
  t.equal(canonicalDecimal(proof.net!), '61.39');
  // a total the file states is compared with the computed sum, to the printed decimal
  const stated = await prove(`Total Royalties\t61.39\n\n${text}`);
  t.same(stated.proof.reasons, []);
  t.match(stated.proof.totals, [{ where: 'preamble', stated: '61.39', agrees: true }]);
  const wrong = await prove(`Total Royalties\t61.40\n\n${text}`);
  t.match(wrong.proof.reasons, [
    { code: 'total_mismatch', field: 'royaltyEarnings', details: { computed: '61.390000000000' } },
  ]);
  // a blank price disproves it: that row has no amount, and nothing says it is 0
  const blank = await prove(text.replace('\t7\t0.64\t', '\t7\t\t'));
  t.match(blank.proof.reasons, [
    { code: 'values_missing', field: 'royaltyEarnings', column: 'Units × Royalty Price', rows: 1 },
  ]);
});
