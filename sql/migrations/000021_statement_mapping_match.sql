-- Why a statement uses its mapping (src/ingest/library.ts, findMappingForHeader): matched by its
-- header hash, or by its columns (in another order, or under another name the library lists),
-- with the columns renamed, missing and extra. Written with mapping_id and mapping_revision when
-- the statement is processed; NULL for statements processed before.
ALTER TABLE statements ADD COLUMN mapping_match jsonb;
