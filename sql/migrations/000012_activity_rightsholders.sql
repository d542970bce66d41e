-- The rightsholders an activity event is about, so that a member restricted to some
-- rightsholders sees only the events whose rightsholders they all may see (README "Activity").
-- NULL: an event about no rightsholder (a mapping, a lens, the organization's name).
ALTER TABLE activity_events ADD COLUMN rightsholder_ids uuid[];

UPDATE activity_events e SET rightsholder_ids = ARRAY[r.id]
  FROM rightsholders r WHERE e.subject_type = 'rightsholder' AND e.subject_id = r.id::text;
UPDATE activity_events e SET rightsholder_ids = ARRAY[s.rightsholder_id]
  FROM statements s WHERE e.subject_type = 'file' AND e.subject_id = s.id::text;
UPDATE activity_events e SET rightsholder_ids = (SELECT array_agg(DISTINCT s.rightsholder_id) FROM statements s WHERE s.upload_id::text = e.subject_id)
  WHERE e.subject_type = 'upload';
UPDATE activity_events e SET rightsholder_ids = x.rightsholder_ids
  FROM exports x WHERE e.subject_type = 'export' AND e.subject_id = x.id::text;
UPDATE activity_events e SET rightsholder_ids = ARRAY[b.rightsholder_id]
  FROM products p JOIN catalog_blocks b ON b.id = p.block_id WHERE e.subject_type = 'product' AND e.subject_id = p.id::text;
-- events whose subject is gone and whose rightsholders cannot be told any more are shown to
-- unrestricted members only
UPDATE activity_events SET rightsholder_ids = '{}'
  WHERE rightsholder_ids IS NULL AND subject_type IN ('rightsholder', 'file', 'upload', 'export', 'product');
UPDATE activity_events SET rightsholder_ids = '{}'
  WHERE rightsholder_ids IS NULL AND action IN ('user.setDataAccessRole', 'organization.setRightsholderMdPriorities');
