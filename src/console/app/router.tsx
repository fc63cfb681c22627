// A history-API router over the pages of ../pages.ts: the server answers index.html for each of
// them, so a reload or an email link lands on the same page.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { pageOf, type Page } from "../pages.ts";

export const BASE = "/console";

export interface Route {
  page: Page | "not_found";
  id?: string;
  query: URLSearchParams;
}

function current(): Route {
  const rest = location.pathname === BASE ? "" : location.pathname.startsWith(BASE + "/") ? location.pathname.slice(BASE.length + 1) : "\0";
  const found = pageOf(rest);
  return { page: found?.page ?? "not_found", id: found?.id, query: new URLSearchParams(location.search) };
}

const listeners = new Set<() => void>();

/** Goes to a console path ("/console/keys"); `replace` keeps it out of the back button's history. */
export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const l of listeners) l();
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () => setRoute(current());
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return route;
}

type LinkProps = { href: string; children: ComponentChildren; class?: string; "aria-current"?: "page" };

/** A real link (open in a new tab works) that navigates in place on a plain click. */
export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
