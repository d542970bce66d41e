-- The payors a statement's rows name, per statement and organization (written with the statement's
-- rows, removed with them). payor.listGlobal lists, besides the shipped payors, those of the
-- caller's own organization and those named in statements of at least three organizations
-- (src/lookups/payors.ts): one organization's business partners are not shown to the others.
-- payors_seen kept names without their organization and outlived their statements; its names come
-- back as their statements are processed again.
CREATE TABLE statement_payors (
  statement_id uuid NOT NULL REFERENCES statements (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name_normalized text NOT NULL CHECK (name_normalized <> ''),
  name text NOT NULL,
  PRIMARY KEY (statement_id, name_normalized)
);
CREATE INDEX statement_payors_name ON statement_payors (name_normalized, organization_id);
DROP TABLE payors_seen;
