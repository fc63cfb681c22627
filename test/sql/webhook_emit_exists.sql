-- Tests only: whether webhook_emit(text, text, jsonb) is installed.
SELECT to_regprocedure('webhook_emit(text,text,jsonb)') IS NOT NULL AS installed;
