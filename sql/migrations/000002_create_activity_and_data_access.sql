-- The activity log (who did what to which subject, with field-level changes), the visits that
-- feed "recently opened" orderings, and per-member data-access roles.

CREATE TABLE activity_events (
  id bigserial PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  actor_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  api_key_id uuid,
  action text NOT NULL,
  subject_type text NOT NULL CHECK (subject_type IN
    ('rightsholder', 'file', 'upload', 'export', 'product', 'mapping', 'lens', 'chat', 'organization', 'user')),
  subject_id text NOT NULL,
  subject_label text,
  -- { field: { before, after } } for updates; null otherwise
  changes jsonb,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX activity_events_org_idx ON activity_events (organization_id, id DESC);
CREATE INDEX activity_events_subject_idx ON activity_events (organization_id, subject_type, subject_id, id DESC);

CREATE TABLE subject_visits (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  subject_type text NOT NULL,
  subject_id text NOT NULL,
  subject_label text,
  visit_count integer NOT NULL DEFAULT 1,
  first_visited_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_visited_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (organization_id, user_id, subject_type, subject_id)
);
CREATE INDEX subject_visits_recent_idx ON subject_visits (organization_id, user_id, subject_type, last_visited_at DESC);

-- A member without a row sees every rightsholder of the organization.
CREATE TABLE data_access_roles (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  mode text NOT NULL CHECK (mode IN ('all', 'restricted')),
  rightsholder_ids uuid[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);
