-- Moves into a version's former cluster whose key was cut to its bounded form name their song too
-- (completing 000038_song_level_clusters, which left every key holding `~` as it was).
--
-- A key longer than 250 code points is stored as its first 200, `~` and 32 hex digits of a hash
-- (src/catalog/identity.ts, boundKey). A version's key is `<song key>|<tags>`: when the `|` lies
-- within the first 200 code points, the song's key before it is whole, and the move is a move into
-- that song. Left as it was, such a move named no cluster once the versions joined their songs: the
-- second refresh took the moved line out of its song into a new cluster of its own.
-- When the song's key itself is that long, its bounded form holds another hash, which SQL cannot
-- derive: those moves stay, and a refresh places them as a move into a cluster that is gone.
-- Track products keep their keys (`track:cluster:<bounded version key>␟<artist>`, as before), and
-- the product corrections keyed by them keep applying. The blocks holding a rewritten move are
-- queued for a refresh, so the moved lines return to their songs at once.
CREATE TEMP TABLE song_moves_rewritten ON COMMIT DROP AS
WITH rewritten AS (
  UPDATE cluster_assignment_overrides
  SET cluster_key = split_part(cluster_key, '|', 1)
  WHERE char_length(cluster_key) = 233
    AND substr(cluster_key, 201) ~ '^~[0-9a-f]{32}$'
    AND strpos(left(cluster_key, 200), '|') > 1
    AND cluster_key NOT LIKE 'user:%'
  RETURNING block_id
)
SELECT DISTINCT block_id FROM rewritten;

DO $$
BEGIN
  IF to_regnamespace('graphile_worker') IS NOT NULL THEN
    PERFORM graphile_worker.add_job('catalog_block_refresh',
      json_build_object('organizationId', b.organization_id, 'rightsholderId', b.rightsholder_id, 'reason', 'song moves of bounded keys'),
      queue_name => 'catalog_block_refresh:' || b.rightsholder_id::text, max_attempts => 5,
      job_key => 'catalog_block_refresh:' || b.rightsholder_id::text, job_key_mode => 'replace')
    FROM catalog_blocks b JOIN organizations o ON o.id = b.organization_id
    WHERE o.deleted_at IS NULL AND b.id IN (SELECT block_id FROM song_moves_rewritten);
  END IF;
END
$$;
