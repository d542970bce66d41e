-- Exports: a file set built by the export_build job from the organization's data, and its output
-- files (parts) in the object store. Lifecycle: queued → running (progress) → completed | failed.
-- File rows are written only in the transaction that completes the export, so a failed or retried
-- export never lists a partial file.
CREATE TABLE exports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  requested_by uuid REFERENCES users (id) ON DELETE SET NULL,
  type text NOT NULL CHECK (type IN ('royalty_lines', 'earnings_summary', 'catalog', 'statements')),
  format text NOT NULL CHECK (format IN ('csv', 'xlsx', 'parquet')),
  rightsholder_ids uuid[] NOT NULL CHECK (cardinality(rightsholder_ids) > 0),
  filters jsonb NOT NULL DEFAULT '{}',
  part_rows integer NOT NULL CHECK (part_rows > 0),
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  progress_done bigint NOT NULL DEFAULT 0,
  progress_total bigint,
  row_count bigint,
  file_count integer,
  total_bytes bigint,
  error_code text,
  error_reason text,
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX exports_org_created_idx ON exports (organization_id, created_at DESC, id);

CREATE TABLE export_files (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  export_id uuid NOT NULL REFERENCES exports (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  part integer NOT NULL CHECK (part >= 1),
  file_name text NOT NULL,
  object_key text NOT NULL,
  content_type text NOT NULL,
  row_count bigint NOT NULL,
  size_bytes bigint NOT NULL,
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (export_id, part)
);
