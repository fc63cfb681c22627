// What the operator commands do to a database, in one place whether the CLI opened the database
// itself or the running service does it for the CLI over its channel (src/ops/channel.ts).
import type { Db, QueryName } from "../db/index.ts";
import { expectSchemaVersion } from "../db/migrate.ts";
import type { OpsRequest } from "./protocol.ts";
import { ScriptUsageError } from "./psql-script.ts";
import { runOpsScript } from "./scripts.ts";

export type OpsHandler = (request: OpsRequest) => Promise<unknown>;

/** Operator scripts are the files of sql/ops/, named `ops/<name>`. */
const SCRIPT_NAME = /^ops\/[a-z][a-z0-9_]*$/;

export function opsHandler(db: Db): OpsHandler {
  return async (request) => {
    switch (request.op) {
      case "hello":
        await expectSchemaVersion(db, request.schema);
        return { database: db.kind };
      case "script":
        if (!SCRIPT_NAME.test(request.file)) throw new ScriptUsageError(`not an operator script: ${request.file} (only the scripts of sql/ops/)`);
        return runOpsScript(db, request.file, request.vars);
      case "query":
        // Any named query of this build: whoever reaches the channel owns the data directory anyway.
        return (db.query as (name: QueryName, params: readonly unknown[]) => Promise<unknown[]>)(request.name as QueryName, request.params);
      case "backup":
        return db.backup();
      default:
        throw new Error(`unknown operator request: ${(request as { op?: unknown }).op}`);
    }
  };
}
