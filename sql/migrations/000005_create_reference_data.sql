-- Reference data shared by every organization: the sales-type taxonomy, sales-type and source
-- lookups keyed by normalizeLookupKey (src/lookups/normalize.ts), source gold data, vector
-- entries for source resolution, the raw values ingestion reports, exchange rates, payors and
-- market data. The shipped starting data arrives in 000006.

CREATE TABLE sales_type_taxonomy (
  primary_sales_type text NOT NULL,
  secondary_sales_type text NOT NULL UNIQUE,
  description text NOT NULL DEFAULT '',
  sort_order integer NOT NULL,
  PRIMARY KEY (primary_sales_type, secondary_sales_type)
);

CREATE TABLE lookup_sales_types (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  original text NOT NULL CHECK (length(original) BETWEEN 1 AND 500),
  original_normalized text NOT NULL UNIQUE CHECK (original_normalized <> ''),
  cleansed text NOT NULL CHECK (length(cleansed) BETWEEN 1 AND 500),
  primary_sales_type text,
  secondary_sales_type text,
  status text NOT NULL DEFAULT 'verified',
  reason jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (secondary_sales_type IS NULL OR primary_sales_type IS NOT NULL),
  FOREIGN KEY (primary_sales_type, secondary_sales_type) REFERENCES sales_type_taxonomy (primary_sales_type, secondary_sales_type) ON UPDATE CASCADE
);
CREATE INDEX lookup_sales_types_status_idx ON lookup_sales_types (status);

CREATE TABLE lookup_sources (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  original text NOT NULL CHECK (length(original) BETWEEN 1 AND 500),
  original_normalized text NOT NULL UNIQUE CHECK (original_normalized <> ''),
  collection_source text,
  earnings_source text,
  earnings_category text,
  earnings_parent_company text,
  publisher_source text,
  status text NOT NULL DEFAULT 'verified',
  reason jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lookup_sources_status_idx ON lookup_sources (status);

-- Curated knowledge of real sources and their aliases: what the built-in resolver matches against.
CREATE TABLE source_gold_data (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  raw_value text NOT NULL CHECK (length(raw_value) BETWEEN 1 AND 500),
  raw_value_normalized text NOT NULL UNIQUE CHECK (raw_value_normalized <> ''),
  earnings_source text,
  earnings_category text,
  parent_company text,
  collection_source text,
  publisher_source text,
  notes jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Vector entries for similarity search; the embedding is (re)computed by the configured embedder
-- and tagged with its model, so a change of embedder recomputes rather than mixes spaces.
CREATE TABLE source_vectors (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  name_normalized text NOT NULL CHECK (name_normalized <> ''),
  category text NOT NULL CHECK (length(category) BETWEEN 1 AND 100),
  embedding real[],
  embedding_model text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (name_normalized, category)
);

-- Filled by ingestion: one row per distinct raw value per statement.
CREATE TABLE statement_raw_values (
  organization_id uuid NOT NULL,
  statement_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('sales_type', 'source')),
  raw_value text NOT NULL,
  row_count bigint NOT NULL,
  usd_amount numeric,
  PRIMARY KEY (statement_id, kind, raw_value)
);
CREATE INDEX statement_raw_values_kind_raw_idx ON statement_raw_values (kind, raw_value);

-- normalizeLookupKey of each raw value seen, computed once in the application (the function is
-- not expressible in SQL) so the missing-lookup reports can join on it.
CREATE TABLE lookup_raw_keys (
  kind text NOT NULL CHECK (kind IN ('sales_type', 'source')),
  raw_value text NOT NULL,
  raw_normalized text NOT NULL,
  PRIMARY KEY (kind, raw_value)
);
CREATE INDEX lookup_raw_keys_normalized_idx ON lookup_raw_keys (kind, raw_normalized);

-- Daily reference rates against the US dollar, both ways, each the exact quotient of the
-- published figures (PostgreSQL numeric division, at least 16 significant digits).
CREATE TABLE fx_rates (
  currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$' AND currency <> 'USD'),
  rate_date date NOT NULL,
  -- units of the currency for one US dollar
  per_usd numeric NOT NULL CHECK (per_usd > 0),
  -- US dollars for one unit of the currency
  usd_per_unit numeric NOT NULL CHECK (usd_per_unit > 0),
  source text NOT NULL CHECK (source IN ('ecb', 'plain')),
  imported_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (currency, rate_date)
);
CREATE INDEX fx_rates_date_idx ON fx_rates (rate_date);

-- Every import of reference data (command line or job), with its outcome.
CREATE TABLE reference_imports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind text NOT NULL CHECK (kind IN ('fx', 'market_history', 'market_symbols', 'treasury_yields')),
  origin text NOT NULL,
  status text NOT NULL CHECK (status IN ('succeeded', 'failed')),
  summary jsonb,
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Known payors: the shipped list, and those seen in statements (upserted by ingestion, with no
-- organization so autocomplete reveals nobody's customers).
CREATE TABLE payors (
  name_normalized text PRIMARY KEY CHECK (name_normalized <> ''),
  name text NOT NULL,
  category text
);
CREATE TABLE payors_seen (
  name_normalized text PRIMARY KEY,
  name text,
  first_seen_at timestamptz
);

CREATE TABLE market_symbols (
  symbol text PRIMARY KEY CHECK (symbol ~ '^[A-Z0-9.^=-]{1,20}$'),
  name text,
  currency text,
  exchange text
);
CREATE TABLE market_prices (
  symbol text NOT NULL REFERENCES market_symbols (symbol) ON DELETE CASCADE,
  price_date date NOT NULL,
  open numeric,
  high numeric,
  low numeric,
  close numeric NOT NULL,
  volume bigint,
  PRIMARY KEY (symbol, price_date)
);
-- The US Treasury's daily par yield curve, one row per date and tenor; a tenor not yet published
-- on a date has no row (never a zero).
CREATE TABLE treasury_yields (
  curve_date date NOT NULL,
  tenor text NOT NULL,
  tenor_months numeric NOT NULL,
  yield_percent numeric NOT NULL,
  PRIMARY KEY (curve_date, tenor)
);
