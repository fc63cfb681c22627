-- A vote, as its signed receipt states it (approval_vote()). $1 receipt
SELECT approves, denies, quorum, due, vote_receipt_ids FROM approval_vote($1::json);
