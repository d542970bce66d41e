-- Rightsholders (artists, labels, publishers), saved analytics lenses with per-member pins and
-- opens, and the caller-owned chats of the assistant.

CREATE TABLE rightsholders (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  legal_name text CHECK (length(legal_name) <= 500),
  aliases text[] NOT NULL DEFAULT '{}',
  ipi_name_numbers text[] NOT NULL DEFAULT '{}',
  isnis text[] NOT NULL DEFAULT '{}',
  streaming_artist_ids text[] NOT NULL DEFAULT '{}',
  store_artist_ids text[] NOT NULL DEFAULT '{}',
  video_channel_ids text[] NOT NULL DEFAULT '{}',
  is_publisher_group boolean NOT NULL DEFAULT false,
  last_updated_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
  -- set by updateById { isDeleted: true }: hidden from lists unless asked; deleteById removes the row
  deleted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX rightsholders_org_name_key ON rightsholders (organization_id, lower(btrim(name)));
CREATE INDEX rightsholders_org_created_idx ON rightsholders (organization_id, created_at DESC, id);

-- Events about something only one member may see (a personal lens) carry that member: the
-- activity lists show them to nobody else.
ALTER TABLE activity_events ADD COLUMN visible_to_user_id uuid REFERENCES users (id) ON DELETE CASCADE;

-- A personal lens belongs to its owner alone; an organization lens to every member. When the
-- owner's account is removed their organization lenses stay, with no owner; a personal lens
-- without an owner is visible to nobody.
CREATE TABLE lenses (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  owner_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  description jsonb,
  scope text NOT NULL DEFAULT 'organization' CHECK (scope IN ('personal', 'organization')),
  tags text[] NOT NULL DEFAULT '{}',
  kind text NOT NULL CHECK (kind IN ('query', 'pivot', 'funnel', 'flow', 'retention', 'drill_down', 'valuation')),
  view_name jsonb,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX lenses_org_updated_idx ON lenses (organization_id, updated_at DESC, id DESC);
CREATE INDEX lenses_org_created_idx ON lenses (organization_id, created_at DESC, id DESC);
CREATE INDEX lenses_org_name_idx ON lenses (organization_id, lower(name), id);
CREATE INDEX lenses_tags_idx ON lenses USING gin (tags);

-- Pins are per member: pinning a lens puts it at hand for the one who pinned it.
CREATE TABLE lens_pins (
  lens_id uuid NOT NULL REFERENCES lenses (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  pinned_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (user_id, lens_id)
);
CREATE INDEX lens_pins_lens_idx ON lens_pins (lens_id);

-- Conversations with the assistant; each belongs to one member of one organization.
CREATE TABLE chats (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  title text CHECK (length(title) <= 500),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX chats_org_user_idx ON chats (organization_id, user_id, updated_at DESC, id);
