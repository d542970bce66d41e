-- The lookup tables' fingerprint when the unknown_sales_types / unknown_sources flags of processed
-- statements were last brought up to date with them (src/lookups/flags.ts): one row.
CREATE TABLE lookup_flag_state (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  fingerprint text NOT NULL,
  checked_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
