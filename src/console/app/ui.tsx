// Small accessible building blocks: labelled fields with their errors, announcements, confirm
// dialogs, the one-time secret, usage bars and the 14-day chart.
import type { ComponentChildren, InputHTMLAttributes, TextareaHTMLAttributes } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { ApiError } from "./api.ts";
import { dayLabels, scaleTop } from "./scale.ts";

// ---- announcements ---------------------------------------------------------------------------

let announceTo: ((message: string) => void) | undefined;

/** Says `message` to screen readers (polite) and shows it in the status line. */
export function announce(message: string): void {
  announceTo?.(message);
}

/** The page's one polite live region; mounted once by the app shell. */
export function StatusLine() {
  const [message, setMessage] = useState("");
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let hide: ReturnType<typeof setTimeout> | undefined;
    announceTo = (m) => {
      // Clear first so that the same message twice is announced twice; the toast then goes away.
      setMessage("");
      clearTimeout(timer);
      clearTimeout(hide);
      timer = setTimeout(() => setMessage(m), 50);
      hide = setTimeout(() => setMessage(""), 8000);
    };
    return () => (announceTo = undefined);
  }, []);
  return (
    <p class="status-line" role="status" aria-live="polite" data-testid="status">
      {message}
    </p>
  );
}

/** A form- or page-level error, announced as soon as it appears. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const requestId = error instanceof ApiError ? error.requestId : undefined;
  const retry = error instanceof ApiError && typeof error.body.retry_after === "number" ? ` Try again in ${error.body.retry_after} s.` : "";
  return (
    <div class="notice error" role="alert">
      <p>
        {message}
        {retry}
      </p>
      {error instanceof ApiError && error.code === "mfa_enrollment_required" && (
        <p>
          <a href="/console/account">Turn on a second factor on the Account page</a>.
        </p>
      )}
      {requestId && <p class="small">Request id: <code>{requestId}</code></p>}
    </div>
  );
}

export function Notice({ kind = "info", children }: { kind?: "info" | "success" | "warning"; children: ComponentChildren }) {
  return <div class={`notice ${kind}`}>{children}</div>;
}

// ---- page title and focus ------------------------------------------------------------------------

// The first page of a visit keeps the browser's own focus start (so Tab reaches the skip link).
let navigated = false;

/**
 * The page's h1: sets the document title and, when the page was reached by navigating inside
 * the console, takes focus so that screen readers announce the new page.
 */
export function PageTitle({ children, text }: { children?: ComponentChildren; text: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${text} · warden console`;
    if (navigated) ref.current?.focus();
    navigated = true;
  }, [text]);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children ?? text}
    </h1>
  );
}

// ---- fields --------------------------------------------------------------------------------------

type FieldProps = {
  label: string;
  hint?: ComponentChildren;
  error?: string;
  multiline?: boolean;
} & Omit<InputHTMLAttributes<HTMLInputElement>, "label"> & Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, "label">;

/** A labelled input (or textarea) whose hint and error are tied to it with aria-describedby. */
export function Field({ label, hint, error, multiline, id, ...rest }: FieldProps) {
  const auto = useId();
  const fieldId = (id as string | undefined) ?? `f${auto}`;
  const hintId = hint ? `${fieldId}-hint` : undefined;
  const errorId = error ? `${fieldId}-error` : undefined;
  const described = [hintId, errorId].filter(Boolean).join(" ") || undefined;
  const common = { id: fieldId, "aria-describedby": described, "aria-invalid": error ? ("true" as const) : undefined };
  return (
    <div class={`field${error ? " invalid" : ""}`}>
      <label for={fieldId}>{label}</label>
      {hint && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
      {multiline ? <textarea {...(rest as TextareaHTMLAttributes<HTMLTextAreaElement>)} {...common} /> : <input {...(rest as InputHTMLAttributes<HTMLInputElement>)} {...common} />}
      {error && (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  );
}

export interface FormState {
  busy: boolean;
  /** The error for the whole form (shown in an alert), when it is not a field's. */
  error?: unknown;
  fields: Record<string, string>;
}

/**
 * Runs a form submission: `busy` while it runs, errors whose code `fieldOf` maps to a field shown
 * at that field (and focused), any other error for the whole form.
 */
export function useSubmit(fieldOf: (code: string) => string | undefined = () => undefined) {
  const [state, setState] = useState<FormState>({ busy: false, fields: {} });
  const formRef = useRef<HTMLFormElement>(null);
  const run = async (action: () => Promise<void>) => {
    setState({ busy: true, fields: {} });
    try {
      await action();
      setState({ busy: false, fields: {} });
    } catch (error) {
      const field = error instanceof ApiError ? fieldOf(error.code) : undefined;
      if (field) {
        setState({ busy: false, fields: { [field]: (error as Error).message } });
        // After render: move the keyboard to the field that needs fixing.
        setTimeout(() => formRef.current?.querySelector<HTMLElement>(`[name="${field}"]`)?.focus(), 0);
      } else setState({ busy: false, error, fields: {} });
    }
  };
  const fail = (fields: Record<string, string>) => {
    setState({ busy: false, fields });
    const first = Object.keys(fields)[0];
    setTimeout(() => formRef.current?.querySelector<HTMLElement>(`[name="${first}"]`)?.focus(), 0);
  };
  return { ...state, run, fail, formRef };
}

// ---- data loading --------------------------------------------------------------------------------

/** Loads data for a page; `reload` fetches again (for example after a change). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

/**
 * Pages of a list read newest first with opaque cursors. Cursors only go forward, so the ones that
 * led here are kept to go back.
 */
export function useCursorPages() {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  return {
    cursor: cursors[cursors.length - 1],
    /** 1 for the newest page. */
    number: cursors.length,
    older: (next: string) => setCursors([...cursors, next]),
    newer: () => setCursors(cursors.slice(0, -1)),
    first: () => setCursors([null]),
  };
}

/** Newer / Older buttons for useCursorPages; `next` is the page's next_cursor. */
export function Pager({ label, pages, next, loading }: { label: string; pages: ReturnType<typeof useCursorPages>; next: string | null | undefined; loading: boolean }) {
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={pages.number === 1 || loading} onClick={pages.newer}>
        Newer
      </button>
      <button type="button" disabled={!next || loading} onClick={() => next && pages.older(next)}>
        Older
      </button>
    </nav>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" aria-busy="true">
      Loading {what}…
    </p>
  );
}

// ---- confirmation --------------------------------------------------------------------------------

/**
 * A button that asks first, in a modal dialog (native <dialog>: focus stays inside, Escape cancels,
 * focus returns to the button).
 */
export function ConfirmButton(props: {
  label: string;
  title: string;
  body: ComponentChildren;
  confirm: string;
  onConfirm: () => void;
  danger?: boolean;
  primary?: boolean;
  disabled?: boolean;
  describedBy?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const close = () => dialog.current?.close();
  return (
    <>
      <button type="button" class={props.danger ? "danger" : props.primary ? "primary" : undefined} disabled={props.disabled} aria-describedby={props.describedBy} onClick={() => dialog.current?.showModal()}>
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={`d${titleId}`}>
        <h2 id={`d${titleId}`}>{props.title}</h2>
        <div>{props.body}</div>
        <div class="actions">
          <button type="button" onClick={close} autoFocus>
            Cancel
          </button>
          <button
            type="button"
            class={props.danger ? "danger" : "primary"}
            onClick={() => {
              close();
              props.onConfirm();
            }}
          >
            {props.confirm}
          </button>
        </div>
      </dialog>
    </>
  );
}

// ---- copy and save -------------------------------------------------------------------------------

/**
 * Puts `text` on the clipboard. When the clipboard is refused (permissions, insecure context),
 * selects `source` instead, for a manual copy, and tries the old command.
 */
export async function copyText(text: string, source?: HTMLElement | null): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    if (source instanceof HTMLInputElement || source instanceof HTMLTextAreaElement) source.select();
    else if (source) getSelection()?.selectAllChildren(source);
    document.execCommand?.("copy");
  }
}

/** A Copy button: copies `text` (or selects `source` for a manual copy) and says so. */
export function CopyButton({ text, source, label = "Copy", said, primary }: { text: string; source?: () => HTMLElement | null; label?: string; said: string; primary?: boolean }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await copyText(text, source?.());
    setCopied(true);
    announce(said);
  };
  return (
    <button type="button" class={primary ? "primary" : undefined} onClick={copy}>
      {copied ? "Copied" : label}
    </button>
  );
}

/** Saves `body` as a file named `name` through the browser's download (nothing leaves the page). */
export function saveFile(name: string, body: Blob): void {
  const url = URL.createObjectURL(body);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has taken the blob by the next turn; the URL would otherwise live as long as the tab.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

// ---- one-time secrets ----------------------------------------------------------------------------

/** A secret shown once (an API key's, or a webhook endpoint's signing secret): a copy button and a warning that it will not be shown again. */
export function SecretReveal({ secret, label, onDone, what = "key" }: { secret: string; label: string; onDone: () => void; what?: "key" | "webhook" }) {
  const id = useId();
  // Keyboard and screen-reader users land on the secret (selected, ready to copy).
  useEffect(() => document.getElementById(`s${id}`)?.focus(), [secret]);
  return (
    <section class="secret" aria-labelledby={`h${id}`} data-testid="secret-reveal">
      <h2 id={`h${id}`} class="wrap">
        {what === "key" ? "New API key" : "Signing secret of"}: {label}
      </h2>
      <p class="warning" id={`w${id}`}>
        <strong>Copy this secret now. It is shown only once:</strong>{" "}
        {what === "key"
          ? "warden keeps only a hash of it and cannot show it again. If you lose it, rotate the key."
          : "your receiver verifies each delivery's signature with it. If you lose it, rotate the secret."}
      </p>
      <label for={`s${id}`}>Secret</label>
      <div class="secret-row">
        <input id={`s${id}`} class="mono" type="text" readOnly value={secret} aria-describedby={`w${id}`} onFocus={(e) => e.currentTarget.select()} data-testid="secret-value" />
        <CopyButton key={secret} primary text={secret} source={() => document.getElementById(`s${id}`)} said="Secret copied to the clipboard." />
      </div>
      <button type="button" onClick={onDone}>
        I have stored it
      </button>
    </section>
  );
}

// ---- usage ---------------------------------------------------------------------------------------

const number = new Intl.NumberFormat("en");
export const formatCount = (n: number | null | undefined) => (n === null || n === undefined ? "unlimited" : number.format(n));

/** Today's use of one limit: a bar (a meter for assistive technology) and the numbers. */
export function UsageBar({ label, used, limit }: { label: string; used: number; limit: number | null }) {
  const id = useId();
  const share = limit ? Math.min(1, used / limit) : 0;
  const level = share >= 0.9 ? "high" : share >= 0.7 ? "mid" : "low";
  return (
    <div class="usage">
      <div class="usage-label">
        <span id={`u${id}`}>{label}</span>
        <span>
          {formatCount(used)} of {formatCount(limit)}
        </span>
      </div>
      <div
        class={`bar ${level}`}
        role="meter"
        aria-labelledby={`u${id}`}
        aria-valuemin={0}
        aria-valuemax={limit ?? used}
        aria-valuenow={used}
        aria-valuetext={limit === null ? `${formatCount(used)}, no limit` : `${formatCount(used)} of ${formatCount(limit)}`}
      >
        <div class="fill" style={{ width: `${(share * 100).toFixed(1)}%` }} />
      </div>
    </div>
  );
}

const compact = new Intl.NumberFormat("en", { notation: "compact" });

/**
 * The last days as paired bars (SVG, no inline style) on a scale with its top, middle and 0
 * marked, each day dated under its bars; the numbers in a table for everyone.
 */
export function HistoryChart({ days }: { days: { day: string; protect: number; execute: number }[] }) {
  const titleId = useId();
  const top = scaleTop(Math.max(...days.map((d) => Math.max(d.protect, d.execute))));
  const width = days.length * 24;
  const height = 100;
  // The scale runs from y = height - 1 (zero, above the axis line) to y = 1 (the top).
  const y = (n: number) => height - 1 - Math.round((n / top) * (height - 2));
  const quiet = days.every((d) => d.protect === 0 && d.execute === 0);
  return (
    <figure class="chart">
      <div class="plot">
        {/* Labels in HTML: SVG text would stretch with the chart. */}
        <ol class="scale" aria-hidden="true" data-testid="chart-scale">
          <li class="top">{compact.format(top)}</li>
          <li class="mid">{compact.format(top / 2)}</li>
          <li class="zero">0</li>
        </ol>
        <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby={`c${titleId}`} preserveAspectRatio="none">
          <title id={`c${titleId}`}>
            Protect and execute calls per day, last {days.length} days, on a scale of 0 to {formatCount(top)}; the table below has the numbers.
          </title>
          <line class="grid" x1={0} x2={width} y1={y(top)} y2={y(top)} />
          <line class="grid" x1={0} x2={width} y1={y(top / 2)} y2={y(top / 2)} />
          <line class="axis" x1={0} x2={width} y1={height - 0.5} y2={height - 0.5} />
          {days.map((d, i) => {
            const x = i * 24 + 3;
            return (
              <g key={d.day}>
                <rect class="protect" x={x} y={y(d.protect)} width={9} height={height - 1 - y(d.protect)} />
                <rect class="execute" x={x + 9} y={y(d.execute)} width={9} height={height - 1 - y(d.execute)} />
              </g>
            );
          })}
        </svg>
        <ol class="days" aria-hidden="true" data-testid="chart-days">
          {dayLabels(days.map((d) => d.day)).map((label, i) => (
            <li key={days[i].day}>
              {label.day}
              {label.month && <span class="month">{label.month}</span>}
            </li>
          ))}
        </ol>
      </div>
      <figcaption>
        Calls per day (UTC): <span class="key protect">protect</span> <span class="key execute">execute</span>
        {quiet ? " · no calls in these days yet" : ""}
      </figcaption>
      <details>
        <summary>Numbers per day</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col">Protect</th>
                <th scope="col">Execute</th>
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr key={d.day}>
                  <td>{d.day}</td>
                  <td>{formatCount(d.protect)}</td>
                  <td>{formatCount(d.execute)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

const dateTime = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short" });

/** A timestamp for people, with the exact ISO value in a <time> element. */
export function When({ iso, none = "—" }: { iso: string | null | undefined; none?: string }) {
  if (!iso) return <>{none}</>;
  return <time dateTime={iso}>{dateTime.format(new Date(iso))}</time>;
}
