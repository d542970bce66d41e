-- Exports expire. A completed export keeps its files for the retention period (7 days unless
-- configured), until `expires_at`; then the export_expire job deletes its objects and file rows and
-- the export is `expired` (downloads answer EXPORT_EXPIRED). `purged_at` records that the objects
-- are gone, so a sweep that failed half-way is finished by the next one.
ALTER TABLE exports ADD COLUMN expires_at timestamptz, ADD COLUMN purged_at timestamptz;
ALTER TABLE exports DROP CONSTRAINT exports_status_check;
ALTER TABLE exports ADD CONSTRAINT exports_status_check CHECK (status IN ('queued', 'running', 'completed', 'failed', 'expired'));
-- exports completed before expiry existed get the default retention from their completion
UPDATE exports SET expires_at = finished_at + interval '7 days' WHERE status = 'completed';
CREATE INDEX exports_expiry_due_idx ON exports (expires_at) WHERE status = 'completed' OR (status = 'expired' AND purged_at IS NULL);
