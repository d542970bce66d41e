-- Identity keys and ignored titles now drop apostrophes and invisible format characters instead
-- of making spaces of them ("Don't Stop" = "Dont Stop" = "Don’t Stop", no longer "Don T Stop").
-- The keys a block stored under the earlier normalization are moved to the current ones by its
-- next refresh (src/catalog/blocks.ts, rekeyLegacyIdentities), the musical details with their
-- corrections, moves and links kept. Every block of a live organization is queued for a refresh
-- now, so that analytics (which keys rows the current way) finds their tracks at once. A database
-- whose job queue is not installed yet has no blocks to refresh.
DO $$
BEGIN
  IF to_regnamespace('graphile_worker') IS NOT NULL THEN
    PERFORM graphile_worker.add_job('catalog_block_refresh',
      json_build_object('organizationId', b.organization_id, 'rightsholderId', b.rightsholder_id, 'reason', 'identity keys'),
      queue_name => 'catalog_block_refresh:' || b.rightsholder_id::text, max_attempts => 5,
      job_key => 'catalog_block_refresh:' || b.rightsholder_id::text, job_key_mode => 'replace')
    FROM catalog_blocks b JOIN organizations o ON o.id = b.organization_id
    WHERE o.deleted_at IS NULL;
  END IF;
END
$$;
