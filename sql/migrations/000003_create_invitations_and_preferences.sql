-- Invitations to join an organization, per-member preferences, and the organization's ordered
-- rightsholder list for musical-detail fetch priority.

-- An invitation is stored as pending, accepted or revoked; "expired" is a pending one whose
-- expires_at has passed, computed when read. The link's token is stored only as its SHA-256.
CREATE TABLE invitations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
  role text NOT NULL CHECK (role IN ('member', 'reader', 'writer', 'admin', 'c2_customer_support', 'owner', 'c2_superadmin')),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'revoked')),
  token_hash bytea NOT NULL UNIQUE,
  invited_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  -- set on the invitation a resend created: the one it replaced
  replaces_invitation_id uuid REFERENCES invitations (id) ON DELETE SET NULL,
  accepted_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX invitations_org_idx ON invitations (organization_id, created_at DESC, id);
CREATE INDEX invitations_org_email_idx ON invitations (organization_id, lower(email)) WHERE status = 'pending';

CREATE TABLE user_preferences (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  rightsholder_sort text NOT NULL DEFAULT 'alphabetical' CHECK (rightsholder_sort IN ('last_updated', 'alphabetical', 'recently_created')),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);

-- No foreign key to rightsholders: a rightsholder removed later simply drops out of the ordering
-- (readers join to rightsholders).
CREATE TABLE rightsholder_md_priorities (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  rightsholder_id uuid NOT NULL,
  position integer NOT NULL CHECK (position >= 1),
  PRIMARY KEY (organization_id, rightsholder_id),
  UNIQUE (organization_id, position)
);
