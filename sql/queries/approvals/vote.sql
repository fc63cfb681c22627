-- A member's vote with its signed receipt (approval_vote()). $1 approval_id, $2 member_id, $3 vote, $4 action_hash shown, $5 self-approval, $6 receipt
SELECT approves, denies, quorum, vote_receipt_ids FROM approval_vote($1, $2, $3, $4, $5, $6::json);
