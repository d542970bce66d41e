// The error registry and the error-code reference (docs/reference/errors.md) describe the same codes, in the same words.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { errorRegistry } from '../src/errors.ts';
import { repoRoot } from './setup/paths.ts';

const section = readFileSync(`${repoRoot}/docs/reference/errors.md`, 'utf8');
const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| ([A-Z_]+) \| (.+) \|$/gm)].map((m) => ({
  errorCode: m[1]!,
  code: m[2]!,
  description: m[3]!,
}));

t.test(
  'every registered errorCode is in the reference with its tRPC code and description',
  async (t) => {
    for (const [errorCode, spec] of Object.entries(errorRegistry)) {
      const row = rows.find((r) => r.errorCode === errorCode);
      t.ok(row, `${errorCode} is documented`);
      if (row)
        t.same(
          { code: row.code, description: row.description },
          { code: spec.code, description: spec.description },
          errorCode,
        );
    }
  },
);

t.test('the reference documents no code the registry lacks', async (t) => {
  t.same(
    rows.map((r) => r.errorCode).filter((c) => !Object.hasOwn(errorRegistry, c)),
    [],
  );
  t.equal(rows.length, Object.keys(errorRegistry).length);
});
