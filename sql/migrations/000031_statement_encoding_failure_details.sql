-- failure_details: what a failed statement's errorCode points at, as data (the offending rows of an
-- AMOUNT_FORMAT_CONFLICT: their row numbers and raw values), shown as failureReason.details.
-- encoding: the text encoding the uploader named for the file (upload.uploadFile, or uploadAction
-- complete/reprocess), read instead of the detected one; NULL detects it.
ALTER TABLE statements ADD COLUMN failure_details jsonb;
ALTER TABLE statements ADD COLUMN encoding text;

-- a failure recorded by a writer that knows nothing of details (an aborted upload, a deleted
-- organization) must not show the details of the failure before it
CREATE FUNCTION statements_failure_details_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.failure_code IS DISTINCT FROM OLD.failure_code AND NEW.failure_details IS NOT DISTINCT FROM OLD.failure_details THEN
    NEW.failure_details := NULL;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER statements_failure_details_follow BEFORE UPDATE OF failure_code ON statements
  FOR EACH ROW EXECUTE FUNCTION statements_failure_details_follow();
