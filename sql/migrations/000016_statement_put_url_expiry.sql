-- When the last presigned PUT URL of a statement stops working (upload.uploadFile, renewed by
-- upload.heartbeat). An aborted or expired statement's object may still be PUT until then; the
-- statement_upload_expire job removes it after that, once (and clears this).
ALTER TABLE statements ADD COLUMN put_url_expires_at timestamptz;
UPDATE statements SET put_url_expires_at = created_at + interval '15 minutes' WHERE status IN ('uploading', 'aborted', 'expired');
