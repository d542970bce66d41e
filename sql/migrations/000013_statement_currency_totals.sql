-- A statement's totals per currency ([{ currency, rows, net, gross, units }], README "Statements"):
-- a statement whose rows are in several currencies has no single net (net_earnings is NULL then).
ALTER TABLE statements ADD COLUMN currency_totals jsonb;
