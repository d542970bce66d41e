// Exact decimal arithmetic, its one home (src/decimal.ts): every digit kept, never a float.
import fc from 'fast-check';
import t from 'tap';
import {
  addDecimals,
  atCommonScale,
  compareDecimals,
  decimalPercent,
  fixedText,
  isDecimalText,
  parseDecimal,
  plainNumber,
  roundHalfAwayFromZero,
  roundHalfEven,
  shortestDecimal,
  shortText,
  subtractDecimals,
  unitsAt,
} from '../src/decimal.ts';

t.test('parsing: sign, digits, point; anything else refused', async (t) => {
  t.same(parseDecimal('-12.50'), { units: -1250n, scale: 2 });
  t.same(parseDecimal(' +0.001 '), { units: 1n, scale: 3 });
  t.same(parseDecimal('.5'), { units: 5n, scale: 1 });
  t.same(parseDecimal('7'), { units: 7n, scale: 0 });
  for (const bad of ['', '-', '.', '1e5', '1,5', '0x10', '١٢', '1.2.3', 'NaN', '--1'])
    t.throws(() => parseDecimal(bad), /not a decimal/, JSON.stringify(bad));
  t.equal(isDecimalText('123.45'), true);
  t.equal(isDecimalText(`1.${'0'.repeat(38)}`), true);
  t.equal(isDecimalText(`1.${'0'.repeat(39)}`), false, 'more decimals than any DECIMAL holds');
  t.equal(isDecimalText('9'.repeat(81)), false, 'longer than BigInt is asked to parse');
  t.equal(isDecimalText(' 1'), false);
  t.equal(unitsAt('1.5', 30), 15n * 10n ** 29n);
  t.throws(() => unitsAt('1.25', 1), /does not fit/);
  t.same(atCommonScale(['1.5', '-2', '0.125']), { scale: 3, units: [1500n, -2000n, 125n] });
});

t.test('text forms', async (t) => {
  t.equal(fixedText(1250n, 2), '12.50');
  t.equal(fixedText(-3n, 2), '-0.03');
  t.equal(fixedText(0n, 3), '0.000');
  t.equal(shortText(1250n, 2), '12.5');
  t.equal(shortText(-3n, 2), '-0.03');
  t.equal(shortText(0n, 5), '0');
  t.equal(shortestDecimal('+0012.3400'), '12.34');
  t.equal(shortestDecimal('-0.000'), '0');
  t.equal(shortestDecimal('1e5'), null);
  t.equal(shortestDecimal(' 1'), null);
  t.equal(plainNumber(1e21), '1000000000000000000000');
  t.equal(plainNumber(1.5e-7), '0.00000015');
  t.equal(plainNumber(-2.5e-13), '-0.00000000000025');
  t.equal(plainNumber(Number.NaN), '');
});

t.test('arithmetic', async (t) => {
  t.equal(addDecimals('1.50', '2'), '3.50', 'a total keeps its parts’ decimals');
  t.equal(addDecimals('-0.1', '0.1'), '0.0');
  t.equal(addDecimals('99999999999999999999999999.99', '0.01'), '100000000000000000000000000.00');
  t.equal(subtractDecimals('10.25', '10'), '0.25');
  t.equal(subtractDecimals('0.1', '0.3'), '-0.2');
  t.equal(compareDecimals('2.50', '2.5'), 0);
  t.equal(compareDecimals('-0.001', '0'), -1);
  t.equal(compareDecimals('10', '9.999999999999999999'), 1);
  t.equal(decimalPercent('1', '3'), '33.3333');
  t.equal(decimalPercent('2', '3'), '66.6667');
  t.equal(decimalPercent('-1', '8', 2), '-12.5', 'half away from zero: -12.5 exactly');
  t.equal(decimalPercent('-1', '3', 0), '-33');
  t.equal(decimalPercent('0.00005', '100', 4), '0.0001', 'half up at the last digit');
  t.equal(decimalPercent('5', '0'), null);
});

const decimal = fc
  .tuple(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.integer({ min: 0, max: 18 }))
  .map(([units, scale]) => ({ units, scale, text: fixedText(units, scale) }));

t.test('sums, differences and order agree with integer arithmetic at a common scale', async () => {
  fc.assert(
    fc.property(decimal, decimal, (a, b) => {
      const scale = Math.max(a.scale, b.scale);
      const x = a.units * 10n ** BigInt(scale - a.scale);
      const y = b.units * 10n ** BigInt(scale - b.scale);
      return (
        addDecimals(a.text, b.text) === fixedText(x + y, scale) &&
        subtractDecimals(a.text, b.text) === shortText(x - y, scale) &&
        compareDecimals(a.text, b.text) === (x === y ? 0 : x < y ? -1 : 1) &&
        shortestDecimal(a.text) === shortText(a.units, a.scale)
      );
    }),
    { numRuns: 500 },
  );
});

t.test('roundHalfEven: to the nearest, a tie to the even last digit, never -0', async (t) => {
  t.equal(roundHalfEven('0.125', 2), '0.12');
  t.equal(roundHalfEven('0.135', 2), '0.14');
  t.equal(roundHalfEven('-0.125', 2), '-0.12');
  t.equal(roundHalfEven('-0.135', 2), '-0.14');
  t.equal(roundHalfEven('0.1250000001', 2), '0.13', 'beyond the tie: up');
  t.equal(roundHalfEven('-0.005', 2), '0', 'a tie to zero is 0, not -0');
  t.equal(roundHalfEven('238.95984887993509241931611655', 10), '238.9598488799');
  t.equal(roundHalfEven('1.50', 10), '1.5', 'fewer decimals: only written shortest');
  t.equal(roundHalfEven('999999999999.99999999995', 10), '1000000000000');
});

t.test('roundHalfAwayFromZero: a tie away from zero, exactly the decimals asked', async (t) => {
  t.equal(roundHalfAwayFromZero('1234.5650', 2), '1234.57', 'half away from zero');
  t.equal(roundHalfAwayFromZero('-1234.5650', 2), '-1234.57');
  t.equal(roundHalfAwayFromZero('1234.5649', 2), '1234.56');
  t.equal(roundHalfAwayFromZero('3', 2), '3.00', 'fewer decimals: written with the decimals asked');
  t.equal(roundHalfAwayFromZero('-0.004', 2), '0.00', 'never -0');
  t.equal(roundHalfAwayFromZero('0.125', 2), '0.13', 'where half to even gives 0.12');
});

t.test('roundHalfEven is within half a unit, and a tie lands on an even digit', async () => {
  fc.assert(
    fc.property(decimal, fc.integer({ min: 0, max: 18 }), (a, scale) => {
      const out = roundHalfEven(a.text, scale);
      const common = Math.max(a.scale, scale);
      const r = unitsAt(out, common);
      const x = a.units * 10n ** BigInt(common - a.scale);
      const half = 10n ** BigInt(common - scale);
      const twiceOff = 2n * (r - x);
      const within = twiceOff <= half && twiceOff >= -half;
      const tie = twiceOff === half || twiceOff === -half;
      return within && (!tie || unitsAt(out, scale) % 2n === 0n) && out !== '-0';
    }),
    { numRuns: 1000 },
  );
});
