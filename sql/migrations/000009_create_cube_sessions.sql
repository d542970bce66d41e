-- Embed sessions of the analytics view (cube.getSession): a short-lived bearer token that
-- authorizes only cube reads of one organization, with the data access of the member who made
-- it. The token is kept so that getSession can hand out the live session again; it expires on
-- its own and dies with the membership (the creator's role is checked on every call).
CREATE TABLE cube_sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token text NOT NULL UNIQUE,
  -- the creating API key's procedure patterns; NULL when made with another credential
  procedure_patterns text[],
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX cube_sessions_owner_idx ON cube_sessions (organization_id, user_id, expires_at DESC);
CREATE INDEX cube_sessions_expiry_idx ON cube_sessions (expires_at);
