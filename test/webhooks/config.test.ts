// The operator's settings for webhooks (README, Configuration): WEBHOOK_ALLOW_PRIVATE,
// WEBHOOK_DELIVERY, and the certificate authorities of NODE_EXTRA_CA_CERTS that deliveries trust.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import { loadConfig } from "../../src/config.ts";
import { trustedAuthorities } from "../../src/webhooks/post.ts";
import { devCertificate } from "../security/helpers.ts";

describe("webhook settings", () => {
  test("private targets are refused and this instance delivers, unless the operator says otherwise", () => {
    expect(loadConfig({})).toMatchObject({ webhookAllowPrivate: false, webhookDelivery: true, extraCaCerts: undefined });
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "1", WEBHOOK_DELIVERY: "0" })).toMatchObject({ webhookAllowPrivate: true, webhookDelivery: false });
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_DELIVERY: "false" })).toMatchObject({ webhookAllowPrivate: true, webhookDelivery: false });
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "0" }).webhookAllowPrivate).toBe(false);
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: "yes" })).toThrow("WEBHOOK_ALLOW_PRIVATE must be 1 or 0");
    expect(() => loadConfig({ WEBHOOK_DELIVERY: "off" })).toThrow("WEBHOOK_DELIVERY must be 1 or 0");
  });

  test("NODE_EXTRA_CA_CERTS: its authorities are trusted beside the runtime's; unset, the runtime's alone", async () => {
    const { cert } = await devCertificate();
    expect(loadConfig({ NODE_EXTRA_CA_CERTS: cert }).extraCaCerts).toBe(cert);
    expect(trustedAuthorities(undefined)).toBeUndefined();
    const trusted = trustedAuthorities(cert)!;
    expect(trusted).toHaveLength(rootCertificates.length + 1);
    expect(trusted.slice(0, -1)).toEqual([...rootCertificates]);
    expect(trusted.at(-1)).toBe(readFileSync(cert, "utf8"));
  });
});
