-- Rate-limit counters shared by every process of one database (RATE_LIMIT_STORE=postgres; see
-- src/net/rateLimit.ts): rate-limiter-flexible's table, one row per budget and key (`urls:principal:
-- <user id>`, `sql:address:<address>`), holding the calls counted in the window ending at expire
-- (milliseconds since the epoch). UNLOGGED: counters are worth no WAL, and losing them in a crash
-- only restarts the windows. Rows expired an hour ago are deleted by the library every 5 minutes.
CREATE UNLOGGED TABLE rate_limits (
  key varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);
