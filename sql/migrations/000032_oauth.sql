-- People sign in with OAuth 2.0 (src/oauth): a password per user (Argon2id, PHC string), the
-- authorization server's state and its keys. Everything the server keeps lives here, so a restart
-- loses nothing and several API processes share it.
ALTER TABLE users ADD COLUMN password_hash text CHECK (password_hash IS NULL OR password_hash LIKE '$argon2id$%');
ALTER TABLE users ADD COLUMN password_set_at timestamptz;

-- oidc-provider's models (Session, Interaction, AuthorizationCode, AccessToken, RefreshToken,
-- DeviceCode, Grant, Client, RegistrationAccessToken...) as one table, one row per instance. The
-- lookups oidc-provider makes besides the id have their own columns: by grant (revoking a family),
-- by user code (device flow) and by uid (a session's interaction).
CREATE TABLE oauth_models (
  model text NOT NULL,
  id text NOT NULL,
  payload jsonb NOT NULL,
  grant_id text,
  user_code text,
  uid text,
  expires_at timestamptz,
  consumed_at timestamptz,
  PRIMARY KEY (model, id)
);
CREATE INDEX oauth_models_grant ON oauth_models (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_models_user_code ON oauth_models (model, user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oauth_models_uid ON oauth_models (model, uid) WHERE uid IS NOT NULL;
CREATE INDEX oauth_models_expires ON oauth_models (expires_at) WHERE expires_at IS NOT NULL;

-- Signing keys (kind 'signing', a private JWK) and the secret cookies are signed with (kind
-- 'cookie'). The newest key of a kind signs; older ones still verify until the rotation removes them.
CREATE TABLE oauth_keys (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('signing', 'cookie')),
  secret jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX oauth_keys_kind ON oauth_keys (kind, created_at DESC);

-- which OAuth client acted, beside api_key_id (the user is actor_user_id)
ALTER TABLE activity_events ADD COLUMN oauth_client_id text;
