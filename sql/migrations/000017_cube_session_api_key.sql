-- An embed session is bound to the API key that made it: deleting the key deletes its sessions
-- (and rotating it or changing its patterns or organizations does, in apiKeys.ts), so a leaked key
-- is revoked with everything minted from it. Sessions made before this have no key on record: they
-- are ended (they live an hour; an embedding page asks for a new one).
DELETE FROM cube_sessions;
ALTER TABLE cube_sessions ADD COLUMN api_key_id uuid REFERENCES api_keys (id) ON DELETE CASCADE;
CREATE INDEX cube_sessions_api_key_idx ON cube_sessions (api_key_id);
