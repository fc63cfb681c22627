-- The tenant's invitations, newest first, with what each shows now (expired: pending past its expiry). $1 tenant_id, $2 now
SELECT i.invitation_id, i.email, i.role, iso_time(i.created_at) AS created_at, iso_time(i.expires_at) AS expires_at,
       member_invitation_status(i.status, i.expires_at, $2::timestamptz) AS status
  FROM member_invitations i
 WHERE i.tenant_id = $1
 ORDER BY i.created_at DESC, i.invitation_id DESC
 LIMIT 200;
