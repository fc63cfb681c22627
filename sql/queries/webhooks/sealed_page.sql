-- Live endpoints' sealed secrets after a webhook id, in id order (the reseal when JWT_SECRET changed).
-- $1 the last webhook_id of the previous page ('' for the first), $2 limit
-- nullable: secret_sealed, previous_secret_sealed
SELECT webhook_id, secret_sealed, previous_secret_sealed FROM webhooks_sealed_page($1, $2::integer);
