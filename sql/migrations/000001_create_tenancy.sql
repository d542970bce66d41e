-- Organizations (tenants), users, memberships with the seven roles, and API keys.

CREATE TABLE organizations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  md_fetch_multiplier integer NOT NULL DEFAULT 1,
  md_fetch_focus boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
  display_name text,
  -- platform operators; NULL for everybody else
  platform_role text CHECK (platform_role IN ('c2_superadmin', 'c2_customer_support')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE memberships (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('member', 'reader', 'writer', 'admin', 'c2_customer_support', 'owner', 'c2_superadmin')),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

-- A key is stored only as the SHA-256 of its secret; the prefix is shown to people to tell keys apart.
CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL DEFAULT 'default',
  key_hash bytea NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  organization_ids uuid[] NOT NULL,
  procedure_patterns text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  rotated_at timestamptz,
  last_used_at timestamptz
);
CREATE INDEX api_keys_user_idx ON api_keys (user_id);
CREATE INDEX api_keys_orgs_idx ON api_keys USING gin (organization_ids);
