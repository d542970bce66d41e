-- payor.listGlobal (src/lookups/payors.ts) aggregated every statement_payors row of every
-- organization, joined to its statement, on each call (about 0.1 s at 5,000 statements, 0.5 s at
-- 50,000, growing with them). payor_spellings keeps what it needs, per organization and spelling:
-- how many statements analytics reads (src/ingest/statements.ts withRows: a processed version, not
-- deleted, not skipped or bad) name the payor so. Triggers keep it: statement_payors.counted says
-- whether a row's statement is counted (set when the row is written, changed with the statement's
-- status, deleted_at or normalized_key), and the counts follow the counted rows written, changed and
-- deleted (a statement deleted takes its rows, and so its counts, with it). Changes of one
-- organization's counts take turns (an advisory lock per organization, taken after the statement
-- rows are locked), so two transactions never wait on each other's counts.
CREATE TABLE payor_spellings (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name_normalized text NOT NULL,
  name text NOT NULL,
  statements integer NOT NULL CHECK (statements > 0),
  PRIMARY KEY (name_normalized, organization_id, name)
);
CREATE INDEX payor_spellings_organization ON payor_spellings (organization_id);

ALTER TABLE statement_payors ADD COLUMN counted boolean NOT NULL DEFAULT false;

-- one organization's counts change one transaction at a time
CREATE FUNCTION payor_spellings_turn(org uuid) RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(hashtextextended('payor-spellings:' || org::text, 0));
$$;

-- adds delta to the count of each (organization, key, spelling) of the rows given as parallel arrays
CREATE FUNCTION payor_spellings_add(orgs uuid[], keys text[], spellings text[], delta integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  org uuid;
BEGIN
  FOR org IN SELECT DISTINCT o FROM unnest(orgs) AS o ORDER BY o LOOP
    PERFORM payor_spellings_turn(org);
  END LOOP;
  IF delta > 0 THEN
    INSERT INTO payor_spellings AS ps (organization_id, name_normalized, name, statements)
    SELECT r.o, r.k, r.sp, count(*)::int * delta FROM unnest(orgs, keys, spellings) AS r (o, k, sp) GROUP BY r.o, r.k, r.sp
    ON CONFLICT (name_normalized, organization_id, name) DO UPDATE SET statements = ps.statements + EXCLUDED.statements;
  ELSE
    -- never inserts: an organization being deleted takes its counts with it. The counts that reach
    -- zero go first, then the others are lowered
    DELETE FROM payor_spellings ps
    USING (SELECT r.o, r.k, r.sp, count(*)::int * delta AS d FROM unnest(orgs, keys, spellings) AS r (o, k, sp) GROUP BY r.o, r.k, r.sp) c
    WHERE ps.organization_id = c.o AND ps.name_normalized = c.k AND ps.name = c.sp AND ps.statements + c.d <= 0;
    UPDATE payor_spellings ps SET statements = ps.statements + c.d
    FROM (SELECT r.o, r.k, r.sp, count(*)::int * delta AS d FROM unnest(orgs, keys, spellings) AS r (o, k, sp) GROUP BY r.o, r.k, r.sp) c
    WHERE ps.organization_id = c.o AND ps.name_normalized = c.k AND ps.name = c.sp;
  END IF;
END;
$$;

-- a row written: counted when its statement is
CREATE FUNCTION statement_payors_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.counted := EXISTS (
    SELECT 1 FROM statements s
    WHERE s.id = NEW.statement_id AND s.normalized_key IS NOT NULL AND s.deleted_at IS NULL AND s.status NOT IN ('skipped', 'bad'));
  RETURN NEW;
END;
$$;
CREATE TRIGGER statement_payors_counted BEFORE INSERT ON statement_payors FOR EACH ROW EXECUTE FUNCTION statement_payors_counted();

CREATE FUNCTION statement_payors_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  orgs uuid[];
  keys text[];
  names text[];
BEGIN
  SELECT array_agg(organization_id), array_agg(name_normalized), array_agg(name) INTO orgs, keys, names FROM new_rows WHERE counted;
  IF orgs IS NOT NULL THEN PERFORM payor_spellings_add(orgs, keys, names, 1); END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER statement_payors_inserted AFTER INSERT ON statement_payors REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION statement_payors_inserted();

CREATE FUNCTION statement_payors_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  orgs uuid[];
  keys text[];
  names text[];
BEGIN
  SELECT array_agg(organization_id), array_agg(name_normalized), array_agg(name) INTO orgs, keys, names FROM old_rows WHERE counted;
  IF orgs IS NOT NULL THEN PERFORM payor_spellings_add(orgs, keys, names, -1); END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER statement_payors_deleted AFTER DELETE ON statement_payors REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION statement_payors_deleted();

-- a statement that comes into analytics or leaves it: its rows are counted, or no longer
CREATE FUNCTION statements_payors_counted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  now_counted boolean := NEW.normalized_key IS NOT NULL AND NEW.deleted_at IS NULL AND NEW.status NOT IN ('skipped', 'bad');
  orgs uuid[];
  keys text[];
  names text[];
BEGIN
  WITH changed AS (
    UPDATE statement_payors sp SET counted = now_counted WHERE sp.statement_id = NEW.id AND sp.counted <> now_counted
    RETURNING sp.organization_id, sp.name_normalized, sp.name
  )
  SELECT array_agg(organization_id), array_agg(name_normalized), array_agg(name) INTO orgs, keys, names FROM changed;
  IF orgs IS NOT NULL THEN PERFORM payor_spellings_add(orgs, keys, names, CASE WHEN now_counted THEN 1 ELSE -1 END); END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER statements_payors_counted AFTER UPDATE OF status, deleted_at, normalized_key ON statements FOR EACH ROW
  WHEN ((OLD.normalized_key IS NOT NULL AND OLD.deleted_at IS NULL AND OLD.status NOT IN ('skipped', 'bad'))
    IS DISTINCT FROM (NEW.normalized_key IS NOT NULL AND NEW.deleted_at IS NULL AND NEW.status NOT IN ('skipped', 'bad')))
  EXECUTE FUNCTION statements_payors_counted();

-- what is there already
UPDATE statement_payors sp SET counted = true FROM statements s
WHERE s.id = sp.statement_id AND s.normalized_key IS NOT NULL AND s.deleted_at IS NULL AND s.status NOT IN ('skipped', 'bad');
INSERT INTO payor_spellings (organization_id, name_normalized, name, statements)
SELECT organization_id, name_normalized, name, count(*) FROM statement_payors WHERE counted GROUP BY organization_id, name_normalized, name;
