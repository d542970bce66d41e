-- The other names a library mapping's columns go by in real files (fixtures/mappings/*.json,
-- `aliases`: header → names), stored with the library row by the library sync so that matching a
-- statement by its columns (src/ingest/library.ts, findMappingForHeader) reads them from here
-- rather than from the library files again. Empty for an organization's own mappings.
ALTER TABLE mappings ADD COLUMN aliases jsonb NOT NULL DEFAULT '{}'::jsonb;
