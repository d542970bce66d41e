-- Statement ingestion: distributors (statement format owners), mappings with revisions, uploads,
-- statements with their lifecycle, flags and the FX rates applied to them.

-- organization_id NULL: a distributor of the shared library that ships with the service.
CREATE TABLE distributors (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX distributors_org_name_key ON distributors (organization_id, lower(btrim(name))) WHERE organization_id IS NOT NULL;

-- A mapping links statement headers (by header hash) to the standard fields. organization_id NULL:
-- a mapping of the shared library (loaded from fixtures/mappings at start).
CREATE TABLE mappings (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
  distributor_id uuid REFERENCES distributors (id) ON DELETE SET NULL,
  name text NOT NULL DEFAULT '',
  headers text[] NOT NULL,
  header_hash text NOT NULL CHECK (header_hash ~ '^[0-9a-f]{64}$'),
  fields jsonb NOT NULL,
  file_categories jsonb,
  revision integer NOT NULL DEFAULT 1,
  library_key text,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX mappings_org_hash_key ON mappings (organization_id, header_hash) WHERE organization_id IS NOT NULL;
CREATE UNIQUE INDEX mappings_library_key ON mappings (library_key) WHERE organization_id IS NULL;
CREATE INDEX mappings_hash_idx ON mappings (header_hash);

CREATE TABLE mapping_revisions (
  mapping_id uuid NOT NULL REFERENCES mappings (id) ON DELETE CASCADE,
  revision integer NOT NULL,
  name text NOT NULL,
  headers text[] NOT NULL,
  header_hash text NOT NULL,
  fields jsonb NOT NULL,
  file_categories jsonb,
  distributor_id uuid,
  changed_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (mapping_id, revision)
);

CREATE TABLE uploads (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX uploads_org_created_idx ON uploads (organization_id, created_at DESC, id);

-- One uploaded file. Lifecycle (DESIGN.md): uploading → uploaded → processing → processed, or
-- needs_mapping, failed, skipped, bad, aborted, expired, deleted (soft).
CREATE TABLE statements (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  upload_id uuid NOT NULL REFERENCES uploads (id) ON DELETE CASCADE,
  rightsholder_id uuid NOT NULL REFERENCES rightsholders (id) ON DELETE CASCADE,
  distributor_id uuid REFERENCES distributors (id) ON DELETE SET NULL,
  mapping_id uuid REFERENCES mappings (id) ON DELETE SET NULL,
  mapping_revision integer,
  custom_name text,
  file_name text NOT NULL,
  content_type text NOT NULL,
  declared_size bigint,
  declared_sha256 text,
  size_bytes bigint,
  sha256 text,
  object_key text NOT NULL,
  status text NOT NULL DEFAULT 'uploading' CHECK (status IN
    ('uploading', 'uploaded', 'processing', 'processed', 'needs_mapping', 'failed', 'skipped', 'bad', 'aborted', 'expired', 'deleted')),
  status_before_delete text,
  upload_expires_at timestamptz,
  failure_code text,
  failure_reason text,
  header_hash text,
  headers text[],
  suggested_mapping jsonb,
  located jsonb,
  row_count integer,
  kept_rows integer,
  removed_rows integer,
  progress_done integer NOT NULL DEFAULT 0,
  progress_total integer NOT NULL DEFAULT 0,
  stmt_year integer,
  stmt_period integer,
  stmt_cadence text,
  currency text,
  sales_period_start date,
  sales_period_end date,
  net_earnings numeric,
  gross_earnings numeric,
  units numeric,
  normalized_key text,
  normalized_version integer NOT NULL DEFAULT 0,
  variants jsonb NOT NULL DEFAULT '{}',
  processed_at timestamptz,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  deleted_at timestamptz
);
CREATE INDEX statements_org_upload_idx ON statements (organization_id, upload_id);
CREATE INDEX statements_org_rightsholder_idx ON statements (organization_id, rightsholder_id);
CREATE INDEX statements_org_status_idx ON statements (organization_id, status);
CREATE INDEX statements_sha_idx ON statements (organization_id, sha256);
CREATE INDEX statements_expiry_idx ON statements (upload_expires_at) WHERE status = 'uploading';

CREATE TABLE statement_flags (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  statement_id uuid NOT NULL REFERENCES statements (id) ON DELETE CASCADE,
  kind text NOT NULL,
  severity text NOT NULL DEFAULT 'warning' CHECK (severity IN ('info', 'warning', 'error')),
  message text NOT NULL,
  details jsonb,
  resolved boolean NOT NULL DEFAULT false,
  resolved_at timestamptz,
  resolved_by uuid REFERENCES users (id) ON DELETE SET NULL,
  shown boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX statement_flags_statement_idx ON statement_flags (statement_id);

-- The USD rate applied to each currency of a statement (rate for the statement period's last day,
-- else the nearest earlier published day). A currency without any rate has no row: never 1.
CREATE TABLE statement_fx (
  statement_id uuid NOT NULL REFERENCES statements (id) ON DELETE CASCADE,
  currency text NOT NULL,
  rate numeric NOT NULL,
  rate_date date NOT NULL,
  PRIMARY KEY (statement_id, currency)
);
