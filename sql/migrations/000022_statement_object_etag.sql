-- The ETag of a statement's uploaded object when upload.uploadAction complete checked it. A PUT URL
-- lives on after complete and cannot be revoked: bytes PUT again later would be read by the
-- pipeline (and every reprocess) in place of the ones checked. Every read of the object compares
-- its ETag with this one; another is UPLOAD_OBJECT_CHANGED. NULL for statements completed before.
ALTER TABLE statements ADD COLUMN object_etag text;
