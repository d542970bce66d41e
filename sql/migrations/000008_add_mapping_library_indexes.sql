-- The shared mapping library and the mapping procedures.

-- Library distributors (organization_id NULL) are upserted by name when the library loads, so
-- their names must be unique too.
CREATE UNIQUE INDEX distributors_library_name_key ON distributors (lower(btrim(name))) WHERE organization_id IS NULL;

-- mapping.redrivePreview and mapping.updateById (verify) find an organization's statements by
-- header hash; distributor.deleteById counts the statements and mappings still using a distributor.
CREATE INDEX statements_org_header_hash_idx ON statements (organization_id, header_hash) WHERE header_hash IS NOT NULL;
CREATE INDEX statements_mapping_idx ON statements (mapping_id) WHERE mapping_id IS NOT NULL;
CREATE INDEX statements_distributor_idx ON statements (distributor_id) WHERE distributor_id IS NOT NULL;
CREATE INDEX mappings_distributor_idx ON mappings (distributor_id) WHERE distributor_id IS NOT NULL;
