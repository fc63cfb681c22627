// /console/entities: the tenant's entities (docs/api.md, "Entities"), in (type, id) order, page by
// page, of one type when one is typed. Writes are an API and CLI matter (`warden entities import`):
// the page shows what policies read.
import { useState } from "preact/hooks";
import { api } from "../app/api.ts";
import { ErrorNotice, Loading, PageTitle, Pager, useCursorPages, useLoad, When } from "../app/ui.tsx";

interface Entity {
  type: string;
  id: string;
  attributes: Record<string, unknown>;
  parents: { type: string; id: string }[];
  version: number;
  updated_at: string;
}

const PAGE_SIZE = 25;

/** "level: 3, teams: ["a","b"]": the attributes, lists as JSON. */
const describe = (attributes: Record<string, unknown>) =>
  Object.entries(attributes)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ");

export function EntitiesPage() {
  const [typed, setTyped] = useState("");
  const [type, setType] = useState("");
  const pages = useCursorPages();
  const cursor = pages.cursor;
  const listing = useLoad(() => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (cursor) query.set("cursor", cursor);
    if (type) query.set("type", type);
    return api<{ entities: Entity[]; next_cursor: string | null }>("GET", `/customer/entities?${query}`);
  }, [cursor, type]);
  const entities = listing.data?.entities ?? [];

  return (
    <section>
      <PageTitle text="Entities" />
      <p>
        What your systems told warden about subjects and resources, for policies to read. Write them with <code>PUT /customer/entities</code> or{" "}
        <code>warden entities import FILE</code>.
      </p>
      <form
        class="field narrow"
        onSubmit={(e) => {
          e.preventDefault();
          setType(typed.trim());
          pages.first();
        }}
      >
        <label for="entities-type">Type</label>
        <input id="entities-type" value={typed} maxLength={128} placeholder="every type" onInput={(e) => setTyped((e.currentTarget as HTMLInputElement).value)} />
        <button type="submit">Show</button>
      </form>
      <ErrorNotice error={listing.error} />
      {listing.loading && !listing.data ? (
        <Loading what="the entities" />
      ) : entities.length === 0 ? (
        <p data-testid="entities-empty">No entities{type ? " of this type" : ""} yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack" data-testid="entities-table">
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Id</th>
                <th scope="col">Attributes</th>
                <th scope="col">Parents</th>
                <th scope="col">Version</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {entities.map((e) => (
                <tr key={`${e.type}\u0000${e.id}`}>
                  <td data-label="Type" class="mono">
                    {e.type}
                  </td>
                  <th scope="row" class="mono">
                    {e.id}
                  </th>
                  <td data-label="Attributes" class="small wrap">
                    {describe(e.attributes)}
                  </td>
                  <td data-label="Parents" class="small wrap">
                    {e.parents.map((p) => `${p.type}/${p.id}`).join(", ")}
                  </td>
                  <td data-label="Version">{e.version}</td>
                  <td data-label="Updated">
                    <When iso={e.updated_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(pages.number > 1 || listing.data?.next_cursor) && <Pager label="Entity pages" pages={pages} next={listing.data?.next_cursor} loading={listing.loading} />}
    </section>
  );
}
