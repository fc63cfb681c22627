// Generated from sql/queries/**/*.sql by `npm run sql:types` (scripts/sql-types.ts): do not edit.
// Each query's parameters and row, as PostgreSQL describes the statement once the schema is applied.
// Row fields are non-null except a field straight from a table column without NOT NULL and the
// fields a query lists on a `-- nullable: a, b` line (function results, expressions over NULL,
// outer-joined columns: what PostgreSQL cannot tell). Each parameter may also be null (src/db/index.ts).

export interface Queries {
  "accounts/account": {
    params: [string, string];
    row: {
      tenant_id: string;
      email: string;
      email_verified: boolean;
      plan: string;
      created_at: string;
      mfa_enabled: boolean;
      member_id: string;
      role: string;
    };
  };
  "accounts/account_epoch": {
    params: [string];
    row: {
      account_id: string;
      session_epoch: number;
    };
  };
  "accounts/credentials": {
    params: [string];
    row: {
      email: string;
      password_hash: string;
    };
  };
  "accounts/end_sessions": {
    params: [string];
    row: {
      session_epoch: number;
    };
  };
  "accounts/find_for_login": {
    params: [string];
    row: {
      account_id: string;
      password_hash: string;
      session_epoch: number;
      mfa_active: boolean;
    };
  };
  "accounts/member_for_session": {
    params: [string, string];
    row: {
      tenant_id: string;
      member_id: string;
      role: string;
      member_epoch: number;
    };
  };
  "accounts/mfa_accept_code": {
    params: [string, number | string, string, Date | string];
    row: {
      accepted: string;
    };
  };
  "accounts/mfa_challenge_spend": {
    params: [string, string, Date | string];
    row: {
      spent: string;
    };
  };
  "accounts/mfa_confirm": {
    params: [string, number | string, readonly string[], Date | string];
    row: {
      confirmed: string;
    };
  };
  "accounts/mfa_disable": {
    params: [string, Date | string];
    row: {
      disabled: string;
    };
  };
  "accounts/mfa_enroll": {
    params: [string, string, Date | string];
    row: {
      enrolled: string;
    };
  };
  "accounts/mfa_recovery_replace": {
    params: [string, readonly string[]];
    row: {
      replaced: string;
    };
  };
  "accounts/mfa_reseal": {
    params: [string, string, string];
    row: {
      account_id: string;
    };
  };
  "accounts/mfa_sealed_page": {
    params: [string, number | string];
    row: {
      account_id: string;
      secret_sealed: string;
    };
  };
  "accounts/mfa_secret": {
    params: [string];
    row: {
      status: string;
      secret_sealed: string;
      last_step: number;
    };
  };
  "accounts/password_change": {
    params: [string, string, string, Date | string];
    row: {
      session_epoch: number;
    };
  };
  "accounts/rate_limit_clear": {
    params: [string];
    row: {
      cleared: number;
    };
  };
  "accounts/rate_limit_hit": {
    params: [string, number | string, number | string, Date | string];
    row: {
      allowed: boolean;
      hits: number;
      retry_after: number;
    };
  };
  "accounts/reset_confirm": {
    params: [string, string, Date | string];
    row: {
      account_id: string;
      session_epoch: number;
    };
  };
  "accounts/reset_request": {
    params: [string, string, string, Date | string];
    row: {
      account_id: string;
      tenant_id: string | null;
      mail_id: number;
    };
  };
  "accounts/session": {
    params: [string, string, string, string];
    row: {
      tenant_id: string;
      plan: string;
      member_id: string;
      account_id: string;
      role: string;
      member_epoch: number;
      account_epoch: number;
      signed_out: boolean;
      mfa_active: boolean;
      require_mfa: boolean;
    };
  };
  "accounts/session_revoke": {
    params: [string, string, Date | string, Date | string];
    row: {
      revoked: string;
    };
  };
  "accounts/signup": {
    params: [string, string, string, string, string, string, string, string];
    row: {
      tenant_id: string;
      key_id: string;
      created_at: string;
    };
  };
  "accounts/tenants": {
    params: [string];
    row: {
      tenant_id: string;
      role: string;
      member_id: string;
      joined_at: string;
      contact_email: string;
    };
  };
  "accounts/token_check": {
    params: [string, string, Date | string];
    row: {
      outcome: string;
    };
  };
  "accounts/verification_confirm": {
    params: [string, Date | string];
    row: {
      account_id: string;
      verified_at: string;
    };
  };
  "accounts/verification_issue": {
    params: [string, string, string, Date | string];
    row: {
      mail_id: number | null;
    };
  };
  "accounts/verification_status": {
    params: [string];
    row: {
      email: string;
      email_verified: boolean;
      verified_at: string | null;
    };
  };
  "approvals/due": {
    params: [number | string, Date | string];
    row: {
      approval_id: string;
      tenant_id: string;
    };
  };
  "approvals/get": {
    params: [string, string];
    row: {
      approval_id: string;
      tenant_id: string;
      protect_receipt_id: string;
      key_id: string;
      key_created_by: string | null;
      key_created_by_account: string | null;
      action_hash: string;
      rule: string;
      quorum: number;
      roles: string[];
      expires_in: number;
      execute_within: number;
      status: string;
      created_at: string;
      expires_at: string;
      outcome_receipt_id: string | null;
      decided_at: string;
      execute_before: string;
      execute_receipt_id: string | null;
    };
  };
  "approvals/list": {
    params: [string, string, Date | string, string, number | string];
    row: {
      approval_id: string;
      tenant_id: string;
      protect_receipt_id: string;
      key_id: string;
      key_created_by: string | null;
      action_hash: string;
      rule: string;
      quorum: number;
      roles: string[];
      expires_in: number;
      execute_within: number;
      status: string;
      created_at: string;
      expires_at: string;
      outcome_receipt_id: string | null;
      decided_at: string;
      execute_before: string;
      execute_receipt_id: string | null;
    };
  };
  "approvals/receipts": {
    params: [string, string];
    row: {
      receipt_id: string;
      tenant_id: string;
      kind: string;
      seq: number;
      prev_hash: string | null;
      chain_hash: string;
      key_id: string | null;
      protect_receipt_id: string | null;
      decision: string | null;
      request_id: string;
      content_hash: string;
      timestamp: string;
      payload: string;
      signature: string;
    };
  };
  "approvals/settle": {
    params: [string, string, unknown];
    row: {
      status: string;
      decided_at: string;
      execute_before: string;
    };
  };
  "approvals/vote": {
    params: [unknown];
    row: {
      approves: number;
      denies: number;
      quorum: number;
      due: string;
      vote_receipt_ids: string[];
    };
  };
  "approvals/votes": {
    params: [string, string];
    row: {
      member_id: string;
      account_id: string;
      vote: string;
      at: string;
      receipt_id: string;
    };
  };
  "audit/append": {
    params: [unknown];
    row: {
      receipt_id: string;
      seq: number;
      prev_hash: string | null;
      chain_hash: string;
    };
  };
  "audit/list": {
    params: [string, number | string, string, string, number | string];
    row: {
      receipt_id: string;
      tenant_id: string;
      kind: string;
      seq: number;
      prev_hash: string | null;
      chain_hash: string;
      key_id: string | null;
      protect_receipt_id: string | null;
      decision: string | null;
      request_id: string;
      content_hash: string;
      timestamp: string;
      payload: string;
      signature: string;
      event: string | null;
      opened_approval_id: string | null;
      decided_by: string | null;
    };
  };
  "audit/outbox_appended": {
    params: [string, number | string, string];
    row: {
      id: number;
    };
  };
  "audit/outbox_claim": {
    params: [number | string];
    row: {
      id: number;
      tenant_id: string;
      event: string;
      operator: string;
      target: unknown;
      at: string;
    };
  };
  "audit/outbox_pending": {
    params: [];
    row: {
      pending: number;
    };
  };
  "entities/catalogue": {
    params: [string];
    row: {
      type: string;
      attribute: string;
    };
  };
  "entities/delete": {
    params: [string, string, string, string];
    row: {
      version: number;
      stored: number;
    };
  };
  "entities/get": {
    params: [string, string, string];
    row: {
      type: string;
      id: string;
      attributes: unknown;
      parents: unknown;
      version: number;
      updated_at: string;
      updated_by: string | null;
    };
  };
  "entities/heads": {
    params: [readonly string[]];
    row: {
      tenant_id: string;
      version: number;
    };
  };
  "entities/list": {
    params: [string, string, string, string, number | string];
    row: {
      type: string;
      id: string;
      attributes: unknown;
      parents: unknown;
      version: number;
      updated_at: string;
      updated_by: string | null;
    };
  };
  "entities/lookup": {
    params: [string, readonly string[], readonly string[]];
    row: {
      epoch: number | null;
      type: string | null;
      id: string | null;
      attributes: unknown;
      parents: unknown;
      version: number | null;
    };
  };
  "entities/upsert": {
    params: [string, string, unknown];
    row: {
      upserted: number;
      version: number;
      stored: number;
    };
  };
  "gateways/create": {
    params: [string, string, string, string, string, string, string, string, string, string, string];
    row: {
      gateway_id: string;
      name: string;
      upstream_url: string;
      upstream_auth: string;
      status: string;
      created_at: string;
      created_by: string | null;
    };
  };
  "gateways/credentials": {
    params: [string, string, string];
    row: {
      key_secret_sealed: string | null;
      secret_sealed: string | null;
      member_secret_sealed: string | null;
    };
  };
  "gateways/delete": {
    params: [string, string, string];
    row: {
      gateway_id: string;
      name: string;
      key_id: string;
    };
  };
  "gateways/get": {
    params: [string, string, string];
    row: {
      gateway_id: string;
      name: string;
      upstream_url: string;
      upstream_auth: string;
      status: string;
      created_at: string;
      created_by: string | null;
      member_secret_set: boolean;
    };
  };
  "gateways/list": {
    params: [string, string];
    row: {
      gateway_id: string;
      name: string;
      upstream_url: string;
      upstream_auth: string;
      status: string;
      created_at: string;
      created_by: string | null;
      member_secret_set: boolean;
    };
  };
  "gateways/member_reseal": {
    params: [string, string, string, string, string];
    row: {
      resealed: boolean;
    };
  };
  "gateways/member_sealed_page": {
    params: [string, string, string, number | string];
    row: {
      tenant_id: string;
      gateway_id: string;
      member_id: string;
      secret_sealed: string;
    };
  };
  "gateways/reseal": {
    params: [string, string, string, string, string, string];
    row: {
      resealed: boolean;
    };
  };
  "gateways/resolve": {
    params: [string];
    row: {
      gateway_id: string;
      tenant_id: string;
      name: string;
      upstream_url: string;
      upstream_auth: string;
      status: string;
    };
  };
  "gateways/sealed_page": {
    params: [string, string, number | string];
    row: {
      tenant_id: string;
      gateway_id: string;
      key_secret_sealed: string | null;
      secret_sealed: string | null;
    };
  };
  "gateways/secret_delete": {
    params: [string, string, string];
    row: {
      deleted: boolean;
    };
  };
  "gateways/secret_set": {
    params: [string, string, string, string];
    row: {
      gateway_id: string;
      updated_at: string;
    };
  };
  "gateways/set_status": {
    params: [string, string, string, boolean];
    row: {
      gateway_id: string;
      status: string;
      changed: boolean;
    };
  };
  "idempotency/claim": {
    params: [string, string, string];
    row: {
      outcome: string;
      response_status: number | null;
      response_headers: unknown;
      response_sealed: string | null;
    };
  };
  "idempotency/complete": {
    params: [string, string, number | string, unknown, string];
    row: Record<string, never>;
  };
  "idempotency/release": {
    params: [string, string];
    row: Record<string, never>;
  };
  "idempotency/sweep": {
    params: [number | string];
    row: {
      deleted: number;
    };
  };
  "keys/authenticate": {
    params: [unknown];
    row: {
      secret_hash: string;
      key_id: string;
      tenant_id: string;
      status: string;
      plan: string;
      policy_id: string | null;
      policy_version: number | null;
      policy_hash: string | null;
      features: string[];
      verdicts: string[];
      required_plans: string[];
      expires_ms: number | null;
      enabled: boolean;
      actions: string[] | null;
      protect_per_day: number | null;
      per_second: number | null;
      burst: number | null;
      allowed_ips: string[] | null;
      overlap_ms: number | null;
      key_context_epoch: number;
    };
  };
  "keys/create": {
    params: [string, string, string, string, string, string, unknown];
    row: {
      key_id: string;
      tenant_id: string;
      label: string;
      status: string;
      created_at: string;
      created_by: string | null;
    };
  };
  "keys/epochs": {
    params: [readonly string[]];
    row: {
      tenant_id: string;
      key_context_epoch: number;
    };
  };
  "keys/expiring_sweep": {
    params: [];
    row: {
      tenant_id: string;
      key_id: string;
      threshold: string;
      queued: number;
    };
  };
  "keys/get": {
    params: [string, string];
    row: {
      key_id: string;
      tenant_id: string;
      label: string;
      status: string;
      created_at: string;
      last_used_at: string | null;
      revoked_at: string | null;
      hint: string;
      created_by: string | null;
      revoked_by: string | null;
      expires_at: string | null;
      enabled: boolean;
      actions: string[] | null;
      limits: unknown;
      allowed_ips: string[] | null;
      metadata: unknown;
      overlap_until: string | null;
    };
  };
  "keys/list": {
    params: [string, Date | string, string, number | string];
    row: {
      key_id: string;
      tenant_id: string;
      label: string;
      status: string;
      created_at: string;
      last_used_at: string | null;
      revoked_at: string | null;
      hint: string;
      created_by: string | null;
      revoked_by: string | null;
      expires_at: string | null;
      enabled: boolean;
      actions: string[] | null;
      limits: unknown;
      allowed_ips: string[] | null;
      metadata: unknown;
      overlap_until: string | null;
      page_position: string;
    };
  };
  "keys/protect_take": {
    params: [string, string, number | string];
    row: {
      allowed: boolean;
      used: number;
    };
  };
  "keys/rate_take": {
    params: [string, string, number | string, number | string];
    row: {
      allowed: boolean;
      retry_after: number;
    };
  };
  "keys/revoke": {
    params: [string, string, string];
    row: {
      key_id: string;
      status: string;
      revoked_at: string;
      revoked_by: string | null;
    };
  };
  "keys/rotate": {
    params: [string, string, string, string, string, string, number | string];
    row: {
      revoked_key_id: string;
      key_id: string;
      tenant_id: string;
      label: string;
      status: string;
      created_at: string;
      created_by: string | null;
    };
  };
  "keys/update": {
    params: [string, string, unknown, string];
    row: {
      key_id: string;
      changed: unknown;
    };
  };
  "members/get": {
    params: [string, string];
    row: {
      member_id: string;
      email: string;
      role: string;
      joined_at: string;
      mfa_enabled: boolean;
    };
  };
  "members/invitation_accept": {
    params: [string, string, string, string, string, Date | string];
    row: {
      tenant_id: string;
      member_id: string;
      account_id: string;
      role: string;
      email: string;
      invitation_id: string;
      new_account: boolean;
    };
  };
  "members/invitation_invitee": {
    params: [string, Date | string];
    row: {
      invitation_id: string;
      tenant_id: string;
      email: string;
      role: string;
      expires_at: string;
      account_id: string | null;
      password_hash: string | null;
      mfa_active: boolean;
    };
  };
  "members/invitation_revoke": {
    params: [string, string, string, Date | string];
    row: {
      invitation_id: string;
      email: string;
      role: string;
    };
  };
  "members/invitations": {
    params: [string, Date | string];
    row: {
      invitation_id: string;
      email: string;
      role: string;
      created_at: string;
      expires_at: string;
      status: string;
    };
  };
  "members/invite": {
    params: [string, string, string, string, string, string, string, unknown, Date | string];
    row: {
      invitation_id: string;
      email: string;
      role: string;
      created_at: string;
      expires_at: string;
    };
  };
  "members/list": {
    params: [string];
    row: {
      member_id: string;
      email: string;
      role: string;
      joined_at: string;
      mfa_enabled: boolean;
      keys: unknown;
    };
  };
  "members/remove": {
    params: [string, string, string, Date | string, boolean];
    row: {
      member_id: string;
      role: string;
      revoked_keys: unknown;
      kept_keys: unknown;
    };
  };
  "members/set_role": {
    params: [string, string, string, string];
    row: {
      member_id: string;
      role: string;
      old_role: string;
    };
  };
  "members/settings": {
    params: [string];
    row: {
      require_mfa: boolean;
      allow_self_approval: boolean;
      revoke_keys_on_member_removal: boolean;
    };
  };
  "members/settings_set": {
    params: [string, boolean, boolean, boolean];
    row: {
      require_mfa: boolean;
      allow_self_approval: boolean;
      revoke_keys_on_member_removal: boolean;
      was_require_mfa: boolean;
      was_allow_self_approval: boolean;
      was_revoke_keys_on_member_removal: boolean;
    };
  };
  "migrations/bookkeeping_table": {
    params: [];
    row: Record<string, never>;
  };
  "migrations/citus": {
    params: [];
    row: {
      citus: boolean;
    };
  };
  "migrations/lock": {
    params: [];
    row: {
      locked: string;
    };
  };
  "migrations/record": {
    params: [string];
    row: Record<string, never>;
  };
  "migrations/state": {
    params: [];
    row: {
      version_table: string | null;
      migrations_table: string | null;
      tenants_table: string | null;
    };
  };
  "migrations/version": {
    params: [];
    row: {
      version: string;
    };
  };
  "oauth/access_verify": {
    params: [string, string, Date | string];
    row: {
      grant_id: string;
      tenant_id: string;
      account_id: string;
      member_id: string;
      role: string;
      client_id: string;
      client_name: string;
      redirect_uri: string;
      gateway_id: string;
      scope: string;
      expires_at: Date;
      gateway_name: string;
      upstream_url: string;
      upstream_auth: string;
      gateway_status: string;
      key_secret_sealed: string | null;
      secret_sealed: string | null;
      member_secret_sealed: string | null;
    };
  };
  "oauth/client_create": {
    params: [string, string, readonly string[], string];
    row: {
      client_id: string;
      client_name: string;
      redirect_uris: string[];
      client_uri: string | null;
      created_at: Date;
    };
  };
  "oauth/client_get": {
    params: [string];
    row: {
      client_id: string;
      client_name: string;
      redirect_uris: string[];
      client_uri: string | null;
    };
  };
  "oauth/code_redeem": {
    params: [string, string, string, string, string, string, string, Date | string, string, Date | string, Date | string];
    row: {
      outcome: string;
      grant_id: string | null;
      revoked: boolean;
    };
  };
  "oauth/grant_create": {
    params: [string, string, string, string, string, string, string, string, string, string, Date | string, Date | string];
    row: {
      grant_id: string;
      expires_at: Date;
    };
  };
  "oauth/grant_get": {
    params: [string, string];
    row: {
      grant_id: string;
      gateway_id: string;
      member_id: string;
      client_id: string;
      client_name: string;
      scope: string;
      status: string;
    };
  };
  "oauth/grant_issue": {
    params: [string, string, string, Date | string, string, Date | string, Date | string];
    row: {
      grant_id: string;
      kind: string;
    };
  };
  "oauth/grant_revoke": {
    params: [string, string, string, string, Date | string];
    row: {
      revoked: boolean;
    };
  };
  "oauth/grants_list": {
    params: [string, string];
    row: {
      grant_id: string;
      gateway_id: string;
      gateway_name: string | null;
      member_id: string;
      member_email: string | null;
      client_id: string;
      client_name: string;
      scope: string;
      status: string;
      created_at: Date;
      last_used_at: Date | null;
      revoked_at: Date | null;
      revoked_reason: string | null;
    };
  };
  "oauth/refresh_rotate": {
    params: [string, string, string, string, string, Date | string, string, Date | string, Date | string];
    row: {
      outcome: string;
      grant_id: string | null;
      scope: string | null;
      revoked: boolean;
    };
  };
  "oauth/token_grant": {
    params: [string, string];
    row: {
      grant_id: string;
      client_id: string;
      member_id: string;
      gateway_id: string;
      status: string;
    };
  };
  "outbox/attempt_failed": {
    params: [number | string, string, boolean, number | string, number | string, number | string];
    row: {
      status: string | null;
    };
  };
  "outbox/claim": {
    params: [string, number | string, number | string];
    row: {
      id: number;
      kind: string;
      recipient: string;
      tenant_id: string | null;
      data: unknown;
      attempts: number;
    };
  };
  "outbox/enqueue": {
    params: [string, string, string, string, unknown];
    row: {
      id: number;
    };
  };
  "outbox/pending_count": {
    params: [string];
    row: {
      pending: number;
    };
  };
  "outbox/sent": {
    params: [number | string];
    row: {
      updated: boolean;
    };
  };
  "plans/catalog_features": {
    params: [];
    row: {
      feature: string;
      name: string;
      description: string;
      required_plan: string;
      access_mode: string;
    };
  };
  "plans/catalog_plans": {
    params: [];
    row: {
      plan: string;
      protect_per_day: number | null;
      execute_per_day: number | null;
      receipts_stored: number | null;
      entities: number;
    };
  };
  "plans/dashboard": {
    params: [string];
    row: {
      keys_active: number;
      pending_request_id: string | null;
      pending_plan: string | null;
      pending_created_at: string | null;
    };
  };
  "plans/feature_access": {
    params: [string, string];
    row: {
      verdict: string;
      required_plan: string;
      access_mode: string;
    };
  };
  "plans/upgrade_cancel": {
    params: [string, string];
    row: {
      request_id: string;
      status: string;
      requested_plan: string;
    };
  };
  "plans/upgrade_create": {
    params: [string, string, string, string, string];
    row: {
      request_id: string;
      status: string;
      requested_plan: string;
      reason: string;
      created_at: string;
      requested_by: string | null;
    };
  };
  "plans/upgrade_list": {
    params: [string];
    row: {
      request_id: string;
      status: string;
      requested_plan: string;
      reason: string;
      created_at: string;
      reviewed_at: string | null;
      review_note: string | null;
      requested_by: string | null;
    };
  };
  "plans/usage_history": {
    params: [string, number | string, Date | string];
    row: {
      day: string;
      protect: number;
      execute: number;
    };
  };
  "policies/active": {
    params: [string];
    row: {
      policy_id: string;
      version: number;
      hash: string;
      document: string;
      created_at: string;
      published_by: string | null;
    };
  };
  "policies/impact_receipts": {
    params: [string, number | string];
    row: {
      receipt_id: string;
      key_id: string | null;
      payload: string;
      timestamp: string;
    };
  };
  "policies/publish": {
    params: [string, string, string, string, string];
    row: {
      policy_id: string;
      version: number;
      hash: string;
      document: string;
      created_at: string;
      published_by: string | null;
    };
  };
  "policies/tests_get": {
    params: [string];
    row: {
      cases: string;
    };
  };
  "policies/tests_put": {
    params: [string, string];
    row: {
      cases: string;
    };
  };
  "policies/version": {
    params: [string, number | string];
    row: {
      policy_id: string;
      version: number;
      hash: string;
      document: string;
      created_at: string;
      published_by: string | null;
    };
  };
  "policies/versions": {
    params: [string, number | string, number | string];
    row: {
      version: number;
      hash: string | null;
      document: string | null;
      created_at: string;
      published_by: string | null;
    };
  };
  "receipts/append": {
    params: [unknown];
    row: {
      idx: number;
      seq: number | null;
      prev_hash: string | null;
      chain_hash: string | null;
      quota_limit: number | null;
      quota_used: number | null;
      refusal: string | null;
      approval: unknown;
    };
  };
  "receipts/append_tenant": {
    params: [string, unknown];
    row: {
      idx: number;
      seq: number | null;
      prev_hash: string | null;
      chain_hash: string | null;
      quota_limit: number | null;
      quota_used: number | null;
      refusal: string | null;
      approval: unknown;
    };
  };
  "receipts/get": {
    params: [string, string];
    row: {
      receipt_id: string;
      tenant_id: string;
      kind: string;
      seq: number;
      prev_hash: string | null;
      chain_hash: string;
      key_id: string | null;
      protect_receipt_id: string | null;
      decision: string | null;
      request_id: string;
      content_hash: string;
      timestamp: string;
      payload: string;
      signature: string;
    };
  };
  "receipts/head": {
    params: [string];
    row: {
      tenant_id: string;
      tree_size: number;
      head_hash: string | null;
      event_count: number;
    };
  };
  "receipts/leaf": {
    params: [string, string];
    row: {
      receipt_id: string;
      seq: number;
      chain_hash: string;
      tree_size: number;
    };
  };
  "receipts/list": {
    params: [string, number | string, number | string];
    row: {
      receipt_id: string;
      tenant_id: string;
      kind: string;
      seq: number;
      prev_hash: string | null;
      chain_hash: string;
      key_id: string | null;
      protect_receipt_id: string | null;
      decision: string | null;
      request_id: string;
      content_hash: string;
      timestamp: string;
      payload: string;
      signature: string;
    };
  };
  "receipts/range": {
    params: [string, number | string, number | string, number | string];
    row: {
      receipt_id: string;
      tenant_id: string;
      kind: string;
      seq: number;
      prev_hash: string | null;
      chain_hash: string;
      key_id: string | null;
      protect_receipt_id: string | null;
      decision: string | null;
      request_id: string;
      content_hash: string;
      timestamp: string;
      payload: string;
      signature: string;
    };
  };
  "receipts/signing_key_create_first": {
    params: [string, unknown, string];
    row: Record<string, never>;
  };
  "receipts/signing_key_rotate": {
    params: [string, unknown, string];
    row: {
      kid: string;
    };
  };
  "receipts/signing_keys": {
    params: [];
    row: {
      kid: string;
      public_jwk: unknown;
      private_sealed: string;
      status: string;
      compromised_since: string;
    };
  };
  "receipts/tile_leaves": {
    params: [string, number | string, number | string];
    row: {
      count: number;
      hex: string;
    };
  };
  "receipts/tile_nodes": {
    params: [string, number | string, number | string, number | string];
    row: {
      count: number;
      hex: string;
    };
  };
  "receipts/tree_head": {
    params: [string];
    row: {
      tree_size: number;
      root_hash: string;
    };
  };
  "receipts/tree_nodes": {
    params: [string, readonly (number | string)[], readonly (number | string)[]];
    row: {
      hash: string;
    };
  };
  "receipts/usage_summary": {
    params: [string, Date | string];
    row: {
      plan: string;
      protect_today: number;
      execute_today: number;
      receipts_stored: number;
      protect_per_day: number | null;
      execute_per_day: number | null;
      receipts_stored_limit: number | null;
    };
  };
  "system/checkpoint": {
    params: [];
    row: Record<string, never>;
  };
  "system/ping": {
    params: [];
    row: {
      ok: number;
    };
  };
  "system/secret_create": {
    params: [string, string];
    row: Record<string, never>;
  };
  "system/secret_get": {
    params: [string];
    row: {
      value: string;
    };
  };
  "usage/list": {
    params: [string, Date | string];
    row: {
      counter: string;
      scope: string;
      window_start: string;
      total: number;
    };
  };
  "usage/peek": {
    params: [unknown];
    row: {
      ord: number;
      total: number;
      exact: string;
    };
  };
  "usage/read": {
    params: [readonly string[], unknown];
    row: {
      tenant_id: string;
      counter: string;
      scope: string;
      window_start: string;
      exact: string;
    };
  };
  "webhooks/attempted": {
    params: [string, number | string, number | string];
    row: {
      recorded: boolean;
    };
  };
  "webhooks/create": {
    params: [string, string, string, string, readonly string[], string, string];
    row: {
      webhook_id: string;
      url: string;
      events: string[];
      description: string | null;
      status: string;
      created_at: string;
    };
  };
  "webhooks/delete": {
    params: [string, string, string];
    row: {
      webhook_id: string;
      url: string;
    };
  };
  "webhooks/deliveries": {
    params: [string, string, number | string, number | string];
    row: {
      delivery_id: string;
      event: string;
      status: string;
      attempts: number;
      last_status_code: number | null;
      last_error: string | null;
      next_attempt_at: string | null;
      created_at: string;
      page_position: number;
    };
  };
  "webhooks/disable": {
    params: [string, string, string, number | string];
    row: {
      disabled: boolean;
    };
  };
  "webhooks/for_delivery": {
    params: [string, string];
    row: {
      webhook_id: string;
      tenant_id: string;
      url: string;
      status: string;
      secret_sealed: string | null;
      previous_secret_sealed: string | null;
    };
  };
  "webhooks/list": {
    params: [string];
    row: {
      webhook_id: string;
      url: string;
      events: string[];
      description: string | null;
      status: string;
      created_at: string;
    };
  };
  "webhooks/reseal": {
    params: [string, string, string, string, string, string];
    row: {
      resealed: boolean;
    };
  };
  "webhooks/rotate_secret": {
    params: [string, string, string, string];
    row: {
      webhook_id: string;
      previous_secret_until: string;
    };
  };
  "webhooks/sealed_page": {
    params: [string, string, number | string];
    row: {
      tenant_id: string;
      webhook_id: string;
      secret_sealed: string | null;
      previous_secret_sealed: string | null;
    };
  };
  "webhooks/test": {
    params: [string, string, string];
    row: {
      delivery_id: string;
    };
  };
}

export type QueryName = keyof Queries;
