-- What a running statement's pipeline is doing (src/ingest/pipeline.ts): 'reading' (downloading
-- the file and finding its table), 'surveying' (counting its rows and reading their distinct
-- values), 'writing' (writing the normalized rows: progress_done moves), 'saving' (storing the
-- files and committing). Shown only while the statement is processing.
ALTER TABLE statements ADD COLUMN progress_stage text;
