-- Each currency of a statement and the day its US-dollar rate is wanted for (the statement
-- period's last day, else the last sales day), written by ingestion beside statement_fx: what
-- lets rates imported later reach statements already processed (src/fx/rerate.ts), a currency
-- that had none as much as one that took an earlier day's rate.
CREATE TABLE statement_currencies (
  statement_id uuid NOT NULL REFERENCES statements (id) ON DELETE CASCADE,
  currency text NOT NULL,
  wanted_date date NOT NULL,
  PRIMARY KEY (statement_id, currency)
);

-- A raw sales type's or source's net earnings per currency ([{ currency, amount }]), from which
-- its usd_amount is computed again when the statement's rates change.
ALTER TABLE statement_raw_values ADD COLUMN amounts jsonb;

-- statements processed before: their currencies without a rate are known from the flag
INSERT INTO statement_currencies (statement_id, currency, wanted_date)
SELECT f.statement_id, c.currency, (f.details ->> 'date')::date
FROM statement_flags f CROSS JOIN LATERAL jsonb_array_elements_text(f.details -> 'currencies') AS c (currency)
WHERE f.kind = 'missing_fx_rate' AND f.details ->> 'date' ~ '^\d{4}-\d{2}-\d{2}$' AND jsonb_typeof(f.details -> 'currencies') = 'array'
ON CONFLICT DO NOTHING;
