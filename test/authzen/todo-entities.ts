// The AuthZEN Todo rules as a constant-size policy over entities, and the Todo application's users
// as entities (openid/authzen interop/authzen-todo-backend): shared by the pure and the HTTP tests.
import type { InlineEntity } from "../../src/decide/entities.ts";
import type { PolicyDocument } from "../../src/decide/policy.ts";

const TODO_ACTIONS = ["can_create_todo", "can_update_todo", "can_delete_todo"];

export const TODO_POLICY: PolicyDocument = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  entities: { subject: { types: ["user"], attributes: { roles: { type: "list" }, email: { type: "string" } } } },
  rules: [
    { id: "everyone_reads", effect: "allow", reason: "every user reads users and todos", when: { actions: ["can_read_user", "can_read_todos"] } },
    { id: "admins", effect: "allow", reason: "an admin changes any todo", when: { actions: TODO_ACTIONS, where: { "subject.attr.roles": { contains: "admin" } } } },
    { id: "editors_create", effect: "allow", reason: "an editor creates todos", when: { actions: ["can_create_todo"], where: { "subject.attr.roles": { contains: "editor" } } } },
    {
      id: "editors_own",
      effect: "allow",
      reason: "an editor changes their own todos",
      when: {
        actions: ["can_update_todo", "can_delete_todo"],
        where: { "subject.attr.roles": { contains: "editor" }, "context.resource.properties.ownerID": { eq: { ref: "subject.attr.email" } } },
      },
    },
  ],
};

// The Todo application's users (openid/authzen interop/authzen-todo-backend): Rick an admin, Morty and Summer editors, Beth and Jerry viewers.
const user = (n: number, email: string, roles: string[]): InlineEntity => ({
  type: "user",
  id: Buffer.from(`\n$fd${n}614d3-c39a-4781-b7bd-8b96f5a5100d\u0012\u0005local`).toString("base64"),
  attributes: { email, roles },
});
export const TODO_USERS: InlineEntity[] = [
  user(0, "rick@the-citadel.com", ["admin", "evil_genius"]),
  user(1, "morty@the-citadel.com", ["editor"]),
  user(2, "summer@the-smiths.com", ["editor"]),
  user(3, "beth@the-smiths.com", ["viewer"]),
  user(4, "jerry@the-smiths.com", ["viewer"]),
];
