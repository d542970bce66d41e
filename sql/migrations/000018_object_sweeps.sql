-- Objects to remove once nothing can write them any more. A presigned PUT URL cannot be revoked:
-- when a statement is deleted (file.deleteFilesByIds, a rightsholder's or an organization's
-- deletion) while a PUT URL of it still works, a PUT may yet write its object, under a key no
-- record points at. The trigger records such keys; the statement_upload_expire job removes each
-- object once its URL is dead.
CREATE TABLE object_sweeps (
  object_key text PRIMARY KEY,
  delete_after timestamptz NOT NULL
);
CREATE INDEX object_sweeps_due_idx ON object_sweeps (delete_after);

CREATE FUNCTION statements_sweep_live_put() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.put_url_expires_at > clock_timestamp() THEN
    INSERT INTO object_sweeps (object_key, delete_after) VALUES (OLD.object_key, OLD.put_url_expires_at + interval '1 minute')
    ON CONFLICT (object_key) DO UPDATE SET delete_after = greatest(object_sweeps.delete_after, EXCLUDED.delete_after);
  END IF;
  RETURN OLD;
END $$;

CREATE TRIGGER statements_sweep_live_put AFTER DELETE ON statements FOR EACH ROW EXECUTE FUNCTION statements_sweep_live_put();
