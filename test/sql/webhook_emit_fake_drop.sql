-- Tests only: drops the stand-in of webhook_emit_fake.sql.
DROP FUNCTION webhook_emit(text, text, jsonb);
