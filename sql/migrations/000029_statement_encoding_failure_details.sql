-- failure_details: what a failed statement's errorCode points at, as data (the offending rows of an
-- AMOUNT_FORMAT_CONFLICT: their row numbers and raw values), shown as failureReason.details.
-- encoding: the text encoding the uploader named for the file (upload.uploadFile, or uploadAction
-- complete/reprocess), read instead of the detected one; NULL detects it.
ALTER TABLE statements ADD COLUMN failure_details jsonb;
ALTER TABLE statements ADD COLUMN encoding text;
