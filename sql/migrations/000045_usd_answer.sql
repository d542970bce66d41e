-- US-dollar amounts as answers give them (docs/money.md): the exact value rounded once to 10
-- decimals, half to even (a tie at the 11th decimal keeps the even 10th digit), without trailing
-- zeros. PostgreSQL's round is half away from zero; analytics applies the same rule in DuckDB
-- (src/analytics/model.ts, usdAnswer). The catalog stores its sums exact and rounds where it answers.
CREATE FUNCTION usd_answer(x numeric) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT trim_scale(CASE WHEN abs(x - trunc(x, 10)) = 0.00000000005 AND mod(trunc(x, 10) * 10000000000, 2) = 0
                         THEN trunc(x, 10) ELSE round(x, 10) END)
$$;
