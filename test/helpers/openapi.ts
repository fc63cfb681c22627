// Real responses held to the OpenAPI document: a reply from a documented operation must have a
// status the operation lists, the content type it lists for that status, and a JSON body valid
// under its schema (Ajv, JSON Schema 2020-12, the dialect of OpenAPI 3.1). call() in
// test/helpers/service.ts checks every reply it reads, so every HTTP test checks the document too.
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { documentPath } from "../../src/app/openapi.ts";
import { requestState } from "../../src/http/request-state.ts";

type Json = Record<string, any>;

export interface Documented {
  status: number;
  contentType: string | null;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: unknown;
}

/** The document's view of replies; requests outside it (the console, /docs, unknown paths) are not its business. */
export class ResponseChecker {
  private readonly ajv: Ajv2020;
  private readonly templates: { method: string; path: string; pattern: RegExp; wide: RegExp; literal: number }[] = [];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Json) {
    // strict: false for OpenAPI's own keywords beside JSON Schema's; `binary` names raw bytes.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, formats: { binary: true } });
    addFormats(this.ajv);
    this.ajv.addSchema(doc, "openapi.json");
    for (const [path, methods] of Object.entries<Json>(doc.paths)) {
      const source = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
      for (const method of Object.keys(methods)) {
        this.templates.push({
          method,
          path,
          pattern: new RegExp(`^${source.replace(/\{[^}]+\}/g, "[^/]+")}$`),
          // A trailing parameter may hold slashes (the tile route's path below tile/).
          wide: new RegExp(`^${source.replace(/\{[^}]+\}$/, ".+").replace(/\{[^}]+\}/g, "[^/]+")}$`),
          literal: path.split("/").filter((s) => s && !s.startsWith("{")).length,
        });
      }
    }
    // Concrete paths before templated ones, as OpenAPI and the router match them.
    this.templates.sort((a, b) => b.literal - a.literal);
  }

  /**
   * The documented operation a request reached: by the route the router matched (`route`, as
   * Elysia names it), or, when no route ran, by the URL, for what the front door answered before
   * routing (a bad request id, plain HTTP, 413, 415). A 404 that no route gave is an unknown path:
   * no operation's.
   */
  operationOf(method: string, url: string, route?: string, status?: number): { method: string; path: string } | undefined {
    const m = method.toLowerCase();
    if (route !== undefined) {
      const path = documentPath(route);
      return this.doc.paths[path]?.[m] ? { method: m, path } : undefined;
    }
    if (status === 404) return undefined;
    const path = new URL(url, "https://warden.test").pathname;
    const found = this.templates.find((t) => t.method === m && t.pattern.test(path)) ?? this.templates.find((t) => t.method === m && t.wide.test(path));
    return found && { method: found.method, path: found.path };
  }

  /**
   * Every way the reply departs from the document (empty when it conforms); undefined when the
   * request reached no documented operation.
   */
  problems(method: string, url: string, reply: Documented, route?: string): string[] | undefined {
    const op = this.operationOf(method, url, route, reply.status);
    if (!op) return undefined;
    const where = `${op.method.toUpperCase()} ${op.path} ${reply.status}`;
    const responses: Json = this.doc.paths[op.path][op.method].responses;
    let response: Json | undefined = responses[String(reply.status)] ?? responses.default;
    if (!response) return [`${where}: status not documented (documented: ${Object.keys(responses).join(", ")})`];
    let pointer = `#/paths/${escape(op.path)}/${op.method}/responses/${reply.status}`;
    if (response.$ref) {
      pointer = response.$ref;
      response = this.resolve(response.$ref);
    }
    const content: Json = response!.content ?? {};
    const type = (reply.contentType ?? "").split(";")[0].trim().toLowerCase();
    if (Object.keys(content).length === 0) return type ? [`${where}: a body of ${type}, none documented`] : [];
    if (!(type in content)) return [`${where}: content type ${type || "(none)"} not documented (documented: ${Object.keys(content).join(", ")})`];
    if (type !== "application/json") return [];
    if (reply.body === undefined) return [`${where}: the body is not JSON`];
    const validate = this.validator(`openapi.json${pointer}/content/${escape(type)}/schema`);
    if (validate(reply.body)) return [];
    return (validate.errors ?? []).map((e) => `${where}: body${e.instancePath} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ""}`);
  }

  private resolve(ref: string): Json {
    return ref
      .slice(2)
      .split("/")
      .reduce((node: Json, part) => node[decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~")], this.doc);
  }

  private validator(ref: string): ValidateFunction {
    let validate = this.validators.get(ref);
    if (!validate) this.validators.set(ref, (validate = this.ajv.compile({ $ref: ref })));
    return validate;
  }
}

/** A JSON Pointer token, as a URI fragment spells it. */
function escape(token: string): string {
  return encodeURIComponent(token.replace(/~/g, "~0").replace(/\//g, "~1"));
}

const checkers = new WeakMap<object, ResponseChecker>();

/** The checker of a service's own document (the bytes it serves at /openapi.json), made once. */
export function checkerOf(service: { openApi: string }): ResponseChecker {
  let checker = checkers.get(service);
  if (!checker) checkers.set(service, (checker = new ResponseChecker(JSON.parse(service.openApi))));
  return checker;
}

/**
 * Throws when the reply to `request` departs from the document of the service that answered it
 * (the route it reached is what the front door noted beside the request).
 */
export function expectDocumented(service: { openApi: string }, request: Request, reply: Documented): void {
  const problems = checkerOf(service).problems(request.method, request.url, reply, requestState(request).route);
  if (problems?.length) throw new Error(`The response departs from /openapi.json:\n  ${problems.join("\n  ")}`);
}
