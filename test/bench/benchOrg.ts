// The benches' organization: one rightsholder, one upload, and statements put in the object
// store and made waiting (`uploaded`) for their ingestion job, as a direct upload leaves them.
// Imported by the benches' child processes only (it loads the service's modules).
import type { Readable } from 'node:stream';
import type { Deps } from '../../src/deps.ts';
import { bootstrap } from '../../src/organizations/bootstrap.ts';

export interface BenchOrg {
  organizationId: string;
  /** a statement of these bytes stored and made; its id */
  putStatement(name: string, body: Buffer | Readable, contentType: string): Promise<string>;
}

export async function benchOrg({ pool, store }: Pick<Deps, 'pool' | 'store'>): Promise<BenchOrg> {
  const org = await bootstrap(pool, { email: 'bench@example.com', organizationName: 'Bench' });
  const rh = await pool.query<{ id: string }>(
    `INSERT INTO rightsholders (organization_id, name) VALUES ($1, 'Bench Artist') RETURNING id`,
    [org.organizationId],
  );
  const up = await pool.query<{ id: string }>(
    'INSERT INTO uploads (organization_id) VALUES ($1) RETURNING id',
    [org.organizationId],
  );
  return {
    organizationId: org.organizationId,
    async putStatement(name, body, contentType) {
      const key = `orgs/${org.organizationId}/statements/bench/original/${name}`;
      await store.put(key, body, contentType);
      const s = await pool.query<{ id: string }>(
        `INSERT INTO statements (organization_id, upload_id, rightsholder_id, file_name, content_type, object_key, status)
         VALUES ($1, $2, $3, $4, $5, $6, 'uploaded') RETURNING id`,
        [org.organizationId, up.rows[0]!.id, rh.rows[0]!.id, name, contentType, key],
      );
      return s.rows[0]!.id;
    },
  };
}
