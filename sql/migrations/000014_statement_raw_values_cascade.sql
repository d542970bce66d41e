-- A statement's raw sales types and sources go with the statement, however it is removed
-- (file.deleteFilesByIds, a rightsholder's or an organization's deletion): the missing-lookup
-- reports must not count files that are gone. Rows of statements already gone are removed first.
DELETE FROM statement_raw_values v WHERE NOT EXISTS (SELECT 1 FROM statements s WHERE s.id = v.statement_id);
ALTER TABLE statement_raw_values
  ADD CONSTRAINT statement_raw_values_statement_fk FOREIGN KEY (statement_id) REFERENCES statements (id) ON DELETE CASCADE;
