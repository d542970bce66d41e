-- An embed session made with an OAuth bearer token is bound to the token's grant: revoking the
-- grant (token revocation, refresh-token reuse, signing out) ends the sessions made under it, as
-- deleting an API key ends the key's (000017). Sessions made before this with a bearer token have
-- no grant on record: they are ended (they live an hour; an embedding page asks for a new one).
DELETE FROM cube_sessions WHERE api_key_id IS NULL;
ALTER TABLE cube_sessions ADD COLUMN oauth_grant_id text;
CREATE INDEX cube_sessions_oauth_grant_idx ON cube_sessions (oauth_grant_id) WHERE oauth_grant_id IS NOT NULL;
