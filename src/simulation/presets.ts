import { deepFreeze, type ProtectInput } from "../decide/policy.ts";

export type Preset = { description: string; input: ProtectInput };

// Fixed inputs so a client can try the engine without inventing a request. Frozen because a
// simulation's content_hash covers the input: it must be the same on every call.
export const PRESETS: Readonly<Record<string, Preset>> = deepFreeze<Record<string, Preset>>({
  small_payment: {
    description: "Pay a vendor 250 USD",
    input: { action: "payment.send", resource: "vendor/acme", amount: 250, currency: "USD" },
  },
  large_payment: {
    description: "Pay a vendor 5000 USD, above the 1000 limit",
    input: { action: "payment.send", resource: "vendor/acme", amount: 5000, currency: "USD" },
  },
  foreign_currency_payment: {
    description: "Pay a vendor 200 JPY, a currency outside USD, EUR and GBP",
    input: { action: "payment.send", resource: "vendor/tokyo-supplies", amount: 200, currency: "JPY" },
  },
  read_document: {
    description: "Read an internal document",
    input: { action: "document.read", resource: "docs/handbook.pdf" },
  },
  drop_production_database: {
    description: "Drop the production customer database",
    input: { action: "database.drop", resource: "prod/db/customers" },
  },
  delete_production_records: {
    description: "Delete records from a production table",
    input: { action: "record.delete", resource: "prod/db/orders" },
  },
  shell_command: {
    description: "Run an arbitrary shell command",
    input: { action: "shell.exec", resource: "host/build-01", context: { command: "rm -rf /tmp/cache" } },
  },
  send_email: {
    description: "Send one email to a customer",
    input: { action: "email.send", resource: "mailbox/support", context: { recipients: 1 } },
  },
  bulk_email: {
    description: "Send a bulk email campaign",
    input: { action: "email.send", resource: "mailbox/marketing", context: { bulk: true, recipients: 50000 } },
  },
  deploy_staging: {
    description: "Deploy the web app to staging",
    input: { action: "deploy", resource: "staging/web" },
  },
  deploy_production_unapproved: {
    description: "Deploy the web app to production without approval",
    input: { action: "deploy", resource: "prod/web" },
  },
  deploy_production_approved: {
    description: "Deploy the web app to production with approval",
    input: { action: "deploy", resource: "prod/web", context: { approved: true } },
  },
  unknown_action: {
    description: "An action no rule mentions falls to the default deny",
    input: { action: "robot.arm.move", resource: "lab/arm-2" },
  },
});

export function presetNames(): string[] {
  return Object.keys(PRESETS).sort();
}
