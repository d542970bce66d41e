// The service as `npm start` runs it: the compiled bundle in dist/, with no TypeScript loader.
// A statement goes through its worker threads and a sqlQuery through its sandbox process (both
// from their bundles), with the exact sums of the fixture; what the service leaves running
// afterwards is its own children only, none defunct and none a compiler.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { createRightsholder, uploadFixture, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { TrpcClient } from '../helpers/trpc.ts';
import { repoRoot } from '../setup/paths.ts';
import { launcher, serviceEnv, waitFor } from './processes.ts';

/** pid, state and command line of each child of a process (from /proc) */
function children(pid: number): { pid: number; state: string; command: string }[] {
  const out: { pid: number; state: string; command: string }[] = [];
  const ids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  for (const id of ids.map(Number)) {
    const stat = readFileSync(`/proc/${id}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
    out.push({
      pid: id,
      state,
      command: readFileSync(`/proc/${id}/cmdline`, 'utf8').split('\0').join(' ').trim(),
    });
  }
  return out;
}

const srv = await startTestServer(t, { role: 'migrate' });
const owner = await newOrganization(srv, 'Compiled Label');
const launch = launcher(t);

t.test(
  'a statement and a sqlQuery through the compiled service; no compiler, no defunct child',
  async (t) => {
    const service = launch(['serve'], serviceEnv(srv.config, { THREADS_WARM: '1' }));
    const [, url] = await waitFor(service, /is running at (http:\/\/\S+)/);
    const pid = service.child.pid!;
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    t.same(command.slice(1, 2), [path.join(repoRoot, 'dist', 'src', 'main.js')]);
    t.notOk(
      command.some((a) => /tsx/.test(a)),
      'no TypeScript loader',
    );

    const client = new TrpcClient(url!, {
      'x-api-key': owner.apiKey,
      'x-organization-id': owner.organizationId,
    });
    const org = owner.organizationId;
    const artist = await createRightsholder(client, org, 'Compiled Artist');
    const fixture = path.join(repoRoot, 'fixtures', 'statements', 'tunecore.csv');
    const expected = JSON.parse(readFileSync(`${fixture}.expected.json`, 'utf8'));
    const { statementId } = await uploadFixture(client, org, artist, fixture);
    const statement = await waitForStatement(client, org, statementId);
    t.equal(statement.status, 'processed');
    t.equal(canonicalDecimal(statement.netEarnings), canonicalDecimal(expected.netEarningsSum));

    const sql = await client.mutate('cube.sqlQuery', {
      organizationId: org,
      sql: 'SELECT count(*) AS n, sum(royalty_earnings) AS earned FROM analytics_full_view',
    });
    t.ok(sql.ok, JSON.stringify(sql.error));
    t.same(sql.ok && sql.data.rows.map(([n, earned]: string[]) => [n, canonicalDecimal(earned!)]), [
      ['28', canonicalDecimal(expected.netEarningsSum)],
    ]);

    // a sandbox that has just been replaced is reaped by the service a moment after it exits, and
    // its successor, being spawned, has no command line for a moment (between fork and exec)
    const settling = (c: { state: string; command: string }) => c.state === 'Z' || c.command === '';
    let left = children(pid);
    for (let i = 0; i < 50 && left.some(settling); i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = children(pid);
    }
    t.same(
      left.filter((c) => c.state === 'Z'),
      [],
      'no defunct child',
    );
    t.same(
      left.filter((c) => /esbuild|tsx/.test(c.command)),
      [],
      'no compiler running',
    );
    // with DATABASE_URL and S3_ENDPOINT set, its only children are the analytics sandboxes
    t.same(
      left.filter((c) => !c.command.includes(path.join('dist', 'workers', 'analyticsSandbox.js'))),
      [],
    );

    service.child.kill('SIGTERM');
    t.same(await service.exited, { code: 0, signal: null });
  },
);
