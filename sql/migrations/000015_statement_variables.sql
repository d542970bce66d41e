-- Values given with an upload for mapping fields of kind `variable` ({ "currency": "EUR" }):
-- upload.uploadFile and upload.uploadAction (complete, reprocess) set them, the pipeline reads them.
ALTER TABLE statements ADD COLUMN variables jsonb NOT NULL DEFAULT '{}'::jsonb;
