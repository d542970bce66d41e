-- Title clusters are songs (docs/songs.md): every version of a title (live, remix, edit...) joins
-- the song's cluster, whose key is the song's alone; a version's own cluster key was the song's key,
-- `|` and its distinguishing tags (`hallelujah|live:olympia`).
--
-- What users corrected survives:
-- * a move into a version's cluster is a move into its song: its key loses the version part (a key
--   cut to its bounded form, `~` and a hash, cannot be split and stays: the next refresh places the
--   detail by the cluster that holds most of that cluster's previous members);
-- * track products stay recordings, keyed `track:cluster:<song key>|<version>␟<artist>` as before,
--   so product corrections and links keep their keys; a refresh no longer carries a version's
--   product keys over to its song when the version's cluster id passes to the song
--   (src/catalog/clusters.ts, followRekeyedClusters);
-- * ignored titles name identity-normalized titles, which this change leaves as they were.
-- Every block of a live organization is queued for a refresh, so its clusters become songs at once.
UPDATE cluster_assignment_overrides
SET cluster_key = split_part(cluster_key, '|', 1)
WHERE strpos(cluster_key, '|') > 1 AND cluster_key NOT LIKE 'user:%' AND strpos(cluster_key, '~') = 0;

DO $$
BEGIN
  IF to_regnamespace('graphile_worker') IS NOT NULL THEN
    PERFORM graphile_worker.add_job('catalog_block_refresh',
      json_build_object('organizationId', b.organization_id, 'rightsholderId', b.rightsholder_id, 'reason', 'song-level clusters'),
      queue_name => 'catalog_block_refresh:' || b.rightsholder_id::text, max_attempts => 5,
      job_key => 'catalog_block_refresh:' || b.rightsholder_id::text, job_key_mode => 'replace')
    FROM catalog_blocks b JOIN organizations o ON o.id = b.organization_id
    WHERE o.deleted_at IS NULL;
  END IF;
END
$$;
