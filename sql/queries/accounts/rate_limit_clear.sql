-- Forgets a subject's rate-limit counters (a successful login, a completed reset). $1 subject
SELECT rate_limit_clear($1) AS cleared;
