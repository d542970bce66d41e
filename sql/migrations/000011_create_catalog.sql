-- The catalog (README "Catalog"): one block per rightsholder, the musical details (distinct track
-- identities) of each block with their enrichment state, title clusters, products (tracks and
-- albums), every user correction as an override row (who and when), organization-wide ignored
-- titles, and the rules behind bulk overrides.
--
-- User corrections are keyed by what survives a rebuild, not only by row id: a musical detail
-- by (block_id, identity_key), a cluster by (block_id, stable_key), a product by
-- (block_id, stable_key). A block refresh deletes the musical details no longer seen and
-- recreates them when they reappear; their overrides stay and are linked back by identity key.

CREATE TABLE catalog_blocks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  rightsholder_id uuid NOT NULL UNIQUE REFERENCES rightsholders (id) ON DELETE CASCADE,
  -- idle: up to date with the statements last read; refreshing: a catalog_block_refresh job runs;
  -- failed: the last refresh failed (last_error), the previous musical details stay in place
  state text NOT NULL DEFAULT 'idle' CHECK (state IN ('idle', 'refreshing', 'failed')),
  progress_done integer NOT NULL DEFAULT 0,
  progress_total integer NOT NULL DEFAULT 0,
  -- the processed statement versions the musical details were built from (statement id → version)
  source_versions jsonb NOT NULL DEFAULT '{}',
  last_error text,
  refreshed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (organization_id, id)
);
CREATE INDEX catalog_blocks_org_idx ON catalog_blocks (organization_id, rightsholder_id);

CREATE TABLE title_clusters (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  block_id uuid NOT NULL REFERENCES catalog_blocks (id) ON DELETE CASCADE,
  -- survives re-clustering: derived from the normalized key of the cluster's display title
  stable_key text NOT NULL,
  display_title text NOT NULL,
  similarity numeric NOT NULL DEFAULT 1 CHECK (similarity >= 0 AND similarity <= 1),
  earnings numeric NOT NULL DEFAULT 0,
  entries integer NOT NULL DEFAULT 0,
  -- 'auto' from clusterTitles, 'user' created by a clustering.updateClustering move
  source text NOT NULL DEFAULT 'auto' CHECK (source IN ('auto', 'user')),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (block_id, stable_key)
);
CREATE INDEX title_clusters_org_block_idx ON title_clusters (organization_id, block_id);
CREATE INDEX title_clusters_block_earnings_idx ON title_clusters (block_id, earnings DESC, id);
CREATE INDEX title_clusters_block_entries_idx ON title_clusters (block_id, entries DESC, id);

-- Fetch states: pending → fetching → found | not_found | failed; skipped (ignored title or
-- stopFetchingByBlock). found, not_found, skipped and failed are terminal ("resolution complete").
CREATE TABLE musical_details (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  block_id uuid NOT NULL REFERENCES catalog_blocks (id) ON DELETE CASCADE,
  -- 'isrc:<ISRC without separators, upper case>' or 'ta:<normalized title>\u001f<normalized artist>'
  identity_key text NOT NULL,
  isrc text,
  -- the representative raw values: those of the variant with the most rows
  title text NOT NULL DEFAULT '',
  -- the title as ignored_titles match it (README "Catalog": identity normalization)
  normalized_title text NOT NULL DEFAULT '',
  artist text,
  release_title text,
  release_artist text,
  -- [{ isrc, title, artist, releaseTitle, releaseArtist, rowCount, earningsUsd }] every raw spelling seen
  variants jsonb NOT NULL DEFAULT '[]',
  row_count bigint NOT NULL DEFAULT 0,
  -- exact USD (statement_fx rates); rows in a currency without a rate are counted, not summed
  earnings_usd numeric NOT NULL DEFAULT 0,
  rows_without_rate bigint NOT NULL DEFAULT 0,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'fetching', 'found', 'not_found', 'skipped', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_error text,
  locked_at timestamptz,
  locked_by text,
  provider text,
  provider_id text,
  -- { title, artist, isrc, releaseTitle, releaseArtist, releaseDate, genres, songWriters, composers, imageUrl, confidence }
  result jsonb,
  fetched_at timestamptz,
  ignored boolean NOT NULL DEFAULT false,
  cluster_id uuid REFERENCES title_clusters (id) ON DELETE SET NULL,
  first_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (block_id, identity_key)
);
CREATE INDEX musical_details_org_block_idx ON musical_details (organization_id, block_id, earnings_usd DESC, id);
CREATE INDEX musical_details_block_state_idx ON musical_details (block_id, state);
CREATE INDEX musical_details_cluster_idx ON musical_details (cluster_id);
CREATE INDEX musical_details_org_title_idx ON musical_details (organization_id, normalized_title);
CREATE INDEX musical_details_isrc_idx ON musical_details (organization_id, isrc) WHERE isrc IS NOT NULL;
-- the enrichment queue: due pending rows per organization, and fetching rows to reclaim
CREATE INDEX musical_details_queue_idx ON musical_details (organization_id, next_attempt_at) WHERE state = 'pending';
CREATE INDEX musical_details_fetching_idx ON musical_details (locked_at) WHERE state = 'fetching';
CREATE INDEX musical_details_provider_idx ON musical_details (organization_id, provider) WHERE provider IS NOT NULL;

-- Rules: a bulk override kept as a query plus values, scoped to one block or to every block of
-- one rightsholder; re-applied to matching musical details after each block refresh.
CREATE TABLE catalog_rules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  scope text NOT NULL CHECK (scope IN ('block', 'rightsholder')),
  block_id uuid REFERENCES catalog_blocks (id) ON DELETE CASCADE,
  rightsholder_id uuid REFERENCES rightsholders (id) ON DELETE CASCADE,
  -- the query language of musicalDetails.executeQuery (README "Catalog")
  query jsonb NOT NULL,
  override_values jsonb NOT NULL,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK ((scope = 'block' AND block_id IS NOT NULL) OR (scope = 'rightsholder' AND rightsholder_id IS NOT NULL))
);
CREATE INDEX catalog_rules_block_idx ON catalog_rules (organization_id, block_id) WHERE block_id IS NOT NULL;
CREATE INDEX catalog_rules_rightsholder_idx ON catalog_rules (organization_id, rightsholder_id) WHERE rightsholder_id IS NOT NULL;

-- The trail of corrections of musical details. The effective values are the fetched result with,
-- per field, the value of the latest override naming that field laid over it.
CREATE TABLE musical_detail_overrides (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  block_id uuid NOT NULL REFERENCES catalog_blocks (id) ON DELETE CASCADE,
  identity_key text NOT NULL,
  -- NULL while the identity is absent from the block's statements; relinked when it reappears
  musical_detail_id uuid REFERENCES musical_details (id) ON DELETE SET NULL,
  -- update_results | bulk_override | rule | ignore
  kind text NOT NULL CHECK (kind IN ('update_results', 'bulk_override', 'rule', 'ignore')),
  rule_id uuid REFERENCES catalog_rules (id) ON DELETE CASCADE,
  -- a subset of { title, artist, releaseDate, imageUrl, genres, albums, songWriters, fetchedComposers }
  "values" jsonb NOT NULL,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX musical_detail_overrides_md_idx ON musical_detail_overrides (musical_detail_id, created_at, id);
CREATE INDEX musical_detail_overrides_identity_idx ON musical_detail_overrides (block_id, identity_key);
CREATE INDEX musical_detail_overrides_org_idx ON musical_detail_overrides (organization_id, created_at DESC);
CREATE UNIQUE INDEX musical_detail_overrides_rule_key ON musical_detail_overrides (rule_id, block_id, identity_key) WHERE rule_id IS NOT NULL;

-- A user's move of a musical detail into a cluster; re-clustering applies it after clusterTitles.
CREATE TABLE cluster_assignment_overrides (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  block_id uuid NOT NULL REFERENCES catalog_blocks (id) ON DELETE CASCADE,
  identity_key text NOT NULL,
  musical_detail_id uuid REFERENCES musical_details (id) ON DELETE SET NULL,
  -- the target cluster by stable key (its id changes when clusters are rebuilt)
  cluster_key text NOT NULL,
  cluster_display_title text,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX cluster_assignment_overrides_block_idx ON cluster_assignment_overrides (block_id, identity_key, created_at DESC);
CREATE INDEX cluster_assignment_overrides_org_idx ON cluster_assignment_overrides (organization_id);

CREATE TABLE products (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  block_id uuid NOT NULL REFERENCES catalog_blocks (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('track', 'album')),
  -- survives a rebuild of the block's products (user corrections are linked by it)
  stable_key text NOT NULL,
  -- a track's album
  parent_id uuid REFERENCES products (id) ON DELETE SET NULL,
  cluster_id uuid REFERENCES title_clusters (id) ON DELETE SET NULL,
  source text NOT NULL DEFAULT 'auto' CHECK (source IN ('auto', 'user')),
  title text NOT NULL,
  artist text,
  isrc text,
  upc text,
  release_date date,
  genres text[] NOT NULL DEFAULT '{}',
  song_writers text[] NOT NULL DEFAULT '{}',
  composers text[] NOT NULL DEFAULT '{}',
  image_url text,
  earnings numeric NOT NULL DEFAULT 0,
  musical_detail_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (block_id, stable_key)
);
CREATE INDEX products_org_block_idx ON products (organization_id, block_id, kind, earnings DESC, id);
CREATE INDEX products_parent_idx ON products (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX products_org_title_idx ON products (organization_id, lower(title));

CREATE TABLE product_overrides (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  block_id uuid NOT NULL REFERENCES catalog_blocks (id) ON DELETE CASCADE,
  product_key text NOT NULL,
  product_id uuid REFERENCES products (id) ON DELETE SET NULL,
  -- update_by_id | relationships | ...
  kind text NOT NULL,
  "values" jsonb NOT NULL,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX product_overrides_product_idx ON product_overrides (product_id, created_at, id);
CREATE INDEX product_overrides_key_idx ON product_overrides (block_id, product_key);
CREATE INDEX product_overrides_org_idx ON product_overrides (organization_id);

CREATE TABLE product_musical_details (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
  musical_detail_id uuid NOT NULL REFERENCES musical_details (id) ON DELETE CASCADE,
  source text NOT NULL DEFAULT 'auto' CHECK (source IN ('auto', 'user')),
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (product_id, musical_detail_id)
);
CREATE INDEX product_musical_details_md_idx ON product_musical_details (musical_detail_id);
CREATE INDEX product_musical_details_org_idx ON product_musical_details (organization_id);

-- Titles the organization excluded from enrichment: musical details with this normalized title
-- are skipped (new ones start skipped; reprocessSkippedByBlock leaves them skipped).
CREATE TABLE ignored_titles (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  title text NOT NULL,
  normalized_title text NOT NULL,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (organization_id, normalized_title)
);

-- The fair queue's memory: when each organization was last served a batch.
CREATE TABLE catalog_fetch_turns (
  organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  last_served_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  served_total bigint NOT NULL DEFAULT 0
);
