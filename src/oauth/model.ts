// Shapes of the OAuth routes (docs/api.md, "OAuth for agents").
import { t } from "elysia";
import { MAX_REDIRECT_URIS, MAX_URL_LENGTH } from "./clients.ts";

const Iso = t.String({ format: "date-time" });
const Text = (max: number) => t.String({ maxLength: max });

/** RFC 8414 authorization server metadata. */
export const ServerMetadata = t.Object({
  issuer: t.String(),
  authorization_endpoint: t.String(),
  token_endpoint: t.String(),
  registration_endpoint: t.String(),
  revocation_endpoint: t.String(),
  response_types_supported: t.Array(t.String()),
  response_modes_supported: t.Array(t.String()),
  grant_types_supported: t.Array(t.String()),
  code_challenge_methods_supported: t.Array(t.String()),
  token_endpoint_auth_methods_supported: t.Array(t.String()),
  revocation_endpoint_auth_methods_supported: t.Array(t.String()),
  scopes_supported: t.Array(t.String()),
  client_id_metadata_document_supported: t.Boolean(),
  authorization_response_iss_parameter_supported: t.Boolean(),
  service_documentation: t.String(),
});

/** An OAuth error (RFC 6749 5.2, RFC 7591 3.2.2), with the service's request id. */
export const OAuthError = t.Object({
  error: t.String(),
  error_description: t.String(),
  request_id: t.String(),
});

/** RFC 7591 client metadata: public clients only. Other metadata is accepted and ignored. */
export const RegisterBody = t.Object(
  {
    redirect_uris: t.Array(t.String({ minLength: 1, maxLength: MAX_URL_LENGTH }), { minItems: 1, maxItems: MAX_REDIRECT_URIS }),
    client_name: t.Optional(t.String({ maxLength: 200, pattern: "^[^\\u0000-\\u001f\\u007f]*$" })),
    // Kept (and shown on the consent page) only when https.
    client_uri: t.Optional(Text(MAX_URL_LENGTH)),
    token_endpoint_auth_method: t.Optional(t.Literal("none")),
    grant_types: t.Optional(t.Array(t.Union([t.Literal("authorization_code"), t.Literal("refresh_token")]), { maxItems: 2 })),
    response_types: t.Optional(t.Array(t.Literal("code"), { maxItems: 1 })),
    scope: t.Optional(Text(500)),
    logo_uri: t.Optional(Text(MAX_URL_LENGTH)),
    tos_uri: t.Optional(Text(MAX_URL_LENGTH)),
    policy_uri: t.Optional(Text(MAX_URL_LENGTH)),
    contacts: t.Optional(t.Array(Text(200), { maxItems: 10 })),
    software_id: t.Optional(Text(200)),
    software_version: t.Optional(Text(100)),
  },
  { additionalProperties: true },
);

export const ClientRegistered = t.Object({
  client_id: t.String({ pattern: "^cli_" }),
  client_id_issued_at: t.Integer(),
  client_name: t.String(),
  redirect_uris: t.Array(t.String()),
  token_endpoint_auth_method: t.Literal("none"),
  grant_types: t.Array(t.String()),
  response_types: t.Array(t.String()),
  client_uri: t.Optional(t.String()),
});

/** The authorization request's parameters (the query of GET /oauth/authorize and of the consent page). */
export const AuthorizationQuery = t.Object(
  {
    response_type: t.Optional(Text(50)),
    client_id: t.Optional(Text(MAX_URL_LENGTH)),
    redirect_uri: t.Optional(Text(MAX_URL_LENGTH)),
    code_challenge: t.Optional(Text(200)),
    code_challenge_method: t.Optional(Text(20)),
    state: t.Optional(Text(1000)),
    scope: t.Optional(Text(1000)),
    resource: t.Optional(Text(MAX_URL_LENGTH)),
    // OIDC's prompt=consent, sent by some clients: consent is always asked.
    prompt: t.Optional(Text(100)),
  },
  { additionalProperties: true },
);

export const ConsentBody = t.Object(
  {
    response_type: t.Optional(Text(50)),
    client_id: t.String({ maxLength: MAX_URL_LENGTH }),
    redirect_uri: t.String({ maxLength: MAX_URL_LENGTH }),
    code_challenge: t.Optional(Text(200)),
    code_challenge_method: t.Optional(Text(20)),
    state: t.Optional(Text(1000)),
    scope: t.Optional(Text(1000)),
    resource: t.Optional(Text(MAX_URL_LENGTH)),
    /** true: consent; false: refuse (the client gets access_denied). */
    approve: t.Boolean(),
  },
  { additionalProperties: false },
);

/** What the consent page shows. */
export const ConsentDetails = t.Object({
  ok: t.Literal(true),
  client: t.Object({
    client_id: t.String(),
    client_name: t.String(),
    client_uri: t.Union([t.String(), t.Null()]),
    kind: t.Union([t.Literal("registered"), t.Literal("metadata_document")]),
  }),
  gateway: t.Object({ gateway_id: t.String(), name: t.String(), tenant_id: t.String(), resource: t.String() }),
  redirect_uri: t.String(),
  scope: t.String(),
  /** The person's member and role in the gateway's tenant: what the agent will act as. */
  member: t.Object({ member_id: t.String(), role: t.String() }),
});

export const ConsentDone = t.Object({
  ok: t.Literal(true),
  /** Where the browser goes now: the client's redirect URI with `code` (or `error=access_denied`), `state` and `iss`. */
  redirect_to: t.String(),
  grant_id: t.Optional(t.String()),
});

export const TokenResponse = t.Object({
  access_token: t.String(),
  token_type: t.Literal("Bearer"),
  expires_in: t.Integer(),
  refresh_token: t.String(),
  scope: t.String(),
});

export const Revoked = t.Object({});

const GrantStatus = t.Union([t.Literal("active"), t.Literal("revoked")]);

export const Grant = t.Object({
  grant_id: t.String({ pattern: "^grt_" }),
  gateway_id: t.String(),
  gateway_name: t.Union([t.String(), t.Null()]),
  member_id: t.String(),
  member_email: t.Union([t.String(), t.Null()]),
  client_id: t.String(),
  client_name: t.String(),
  scope: t.String(),
  status: GrantStatus,
  created_at: Iso,
  last_used_at: t.Union([Iso, t.Null()]),
  revoked_at: t.Union([Iso, t.Null()]),
  revoked_reason: t.Union([t.String(), t.Null()]),
});

export const GrantList = t.Object({ ok: t.Literal(true), grants: t.Array(Grant) });
export const GrantParams = t.Object({ grant_id: t.String() });
export const GrantRevoked = t.Object({ ok: t.Literal(true), grant_id: t.String(), status: t.Literal("revoked") });
