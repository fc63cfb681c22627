// The policy editor's code editor: CodeMirror 6 for one JSON text (the policy document or the test
// cases). It checks the text as you type against the schema the service validates with
// (./schema-help.ts) and marks each problem at its place, in the gutter and the text, together
// with the service's refusals of what was last sent; it completes the names and values the
// schema allows at the cursor. Loaded on the policy page only (a chunk of its own), so the other
// pages do not carry it.
import { acceptCompletion, autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap, pickedCompletion, startCompletion, type Completion, type CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { json } from "@codemirror/lang-json";
import { bracketMatching, HighlightStyle, indentOnInput, syntaxHighlighting } from "@codemirror/language";
import { diagnosticCount, lintGutter, linter, lintKeymap, type Diagnostic } from "@codemirror/lint";
import { EditorState, StateEffect } from "@codemirror/state";
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { mergeProblems, type EditorField, type Problem } from "./problems.ts";
import { checkText, suggestionsAt, type Suggestion } from "./schema-help.ts";

export interface JsonEditorOptions {
  parent: HTMLElement;
  field: EditorField;
  text: string;
  /** The ids of the visible label, the hint, and the list of problems below the editor. */
  labelId: string;
  hintId: string;
  problemsId: string;
  onChange: (text: string) => void;
  /** Every problem marked, after each check: the page lists them under the editor. */
  onProblems: (problems: Problem[]) => void;
}

export interface JsonEditor {
  /** Replaces the text, when it differs (the draft discarded, a publish done). */
  setText: (text: string) => void;
  /** The service's refusals of what was last sent, marked with the page's own problems. */
  setRefused: (problems: Problem[]) => void;
  /** Puts the cursor on a problem (its range selected) and the focus in the editor. */
  reveal: (problem: Problem) => void;
  focus: () => void;
  destroy: () => void;
}

const MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';

// The console's colours (its CSS variables, light and dark: src/console/styles.css).
const theme = EditorView.theme({
  "&": { background: "var(--surface)", color: "var(--text)", fontSize: "0.875rem", height: "28rem" },
  "&.cm-focused": { outline: "3px solid var(--focus)", outlineOffset: "2px" },
  ".cm-scroller": { fontFamily: MONO, lineHeight: "1.45" },
  ".cm-content": { caretColor: "var(--text)" },
  ".cm-cursor": { borderLeftColor: "var(--text)" },
  ".cm-gutters": { background: "var(--bg)", color: "var(--muted)", borderRight: "1px solid var(--line)" },
  ".cm-activeLine": { background: "color-mix(in srgb, var(--accent) 8%, transparent)" },
  ".cm-activeLineGutter": { background: "color-mix(in srgb, var(--accent) 18%, transparent)", color: "var(--text)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground": { background: "color-mix(in srgb, var(--accent) 30%, transparent)" },
  ".cm-tooltip": { background: "var(--surface)", color: "var(--text)", border: "1px solid var(--line)", borderRadius: "4px" },
  ".cm-tooltip.cm-tooltip-autocomplete > ul": { fontFamily: MONO },
  ".cm-tooltip.cm-tooltip-autocomplete > ul > li[aria-selected]": { background: "var(--accent)", color: "var(--accent-text)" },
  ".cm-completionDetail": { color: "var(--muted)", fontStyle: "normal", marginLeft: "1em" },
  "li[aria-selected] .cm-completionDetail": { color: "inherit" },
  ".cm-completionInfo": { maxWidth: "20rem" },
  ".cm-diagnostic": { padding: "0.25rem 0.5rem" },
  ".cm-diagnostic-error": { borderLeft: "4px solid var(--danger)" },
  ".cm-diagnosticSource": { color: "var(--muted)" },
});

const highlight = HighlightStyle.define([
  { tag: tags.propertyName, color: "var(--accent)" },
  { tag: tags.string, color: "var(--ok)" },
  { tag: tags.number, color: "var(--execute)" },
  { tag: [tags.bool, tags.null], color: "var(--warn)", fontWeight: "600" },
]);

// Says that the service's refusals changed: the text is checked again (and marked) at once.
const refusalsChanged = StateEffect.define<null>();

// Short enough to feel immediate, long enough not to judge every keystroke of a word.
const CHECK_DELAY_MS = 300;

export function mountJsonEditor(options: JsonEditorOptions): JsonEditor {
  let refused: Problem[] = [];
  // Set while the text is replaced from outside, so the change is not reported back as an edit.
  let replacing = false;

  const check = (view: EditorView): Diagnostic[] => {
    const text = view.state.doc.toString();
    const problems = mergeProblems(checkText(options.field, text), refused);
    options.onProblems(problems);
    return problems.map((p) => toDiagnostic(p, view.state.doc.length, (line) => view.state.doc.line(Math.min(line, view.state.doc.lines))));
  };

  const complete = (context: CompletionContext): CompletionResult | null => {
    const text = context.state.doc.toString();
    const found = suggestionsAt(options.field, text, context.pos);
    if (!found) return null;
    // Uninvited, only once something is typed (a quote, a letter): not at every space or bracket.
    const typed = context.pos > found.from || text[found.from] === '"';
    if (!context.explicit && !typed) return null;
    // What follows the cursor and goes too (a closing quote): it moves on as more is typed.
    const tail = found.to - context.pos;
    return {
      from: found.match,
      to: Math.max(found.match, context.pos),
      validFor: /^[\w.-]*$/,
      // In the schema's order (the order docs/policy.md gives them), not the alphabet's.
      options: found.options.map((s, i) => ({ ...completion(s, found.from, tail), boost: Math.max(-99, -i) })),
    };
  };

  const view = new EditorView({
    parent: options.parent,
    state: EditorState.create({
      doc: options.text,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        lintGutter(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        closeBrackets(),
        syntaxHighlighting(highlight),
        theme,
        json(),
        linter(check, { delay: CHECK_DELAY_MS, needsRefresh: (update) => update.transactions.some((tr) => tr.effects.some((e) => e.is(refusalsChanged))) }),
        autocompletion({ override: [complete], icons: false }),
        // Tab is left to the browser, so the keyboard can always leave the editor; Enter or Tab
        // accepts a completion while the list is open.
        keymap.of([{ key: "Tab", run: acceptCompletion }, ...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap, ...lintKeymap]),
        EditorView.contentAttributes.of((view) => {
          const problems = diagnosticCount(view.state) > 0;
          return {
            "aria-labelledby": options.labelId,
            "aria-describedby": problems ? `${options.hintId} ${options.problemsId}` : options.hintId,
            "aria-invalid": problems ? "true" : "false",
            "data-field": options.field,
          };
        }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !replacing) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });

  return {
    setText(text) {
      if (text === view.state.doc.toString()) return;
      replacing = true;
      try {
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
      } finally {
        replacing = false;
      }
    },
    setRefused(problems) {
      if (JSON.stringify(problems) === JSON.stringify(refused)) return;
      refused = problems;
      view.dispatch({ effects: refusalsChanged.of(null) });
    },
    reveal(problem) {
      const doc = view.state.doc;
      const line = problem.line === undefined ? undefined : doc.line(Math.min(Math.max(problem.line, 1), doc.lines));
      const from = Math.min(problem.from ?? line?.from ?? 0, doc.length);
      const to = Math.min(problem.to ?? line?.to ?? from, doc.length);
      view.dispatch({ selection: { anchor: from, head: to }, scrollIntoView: true });
      view.focus();
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}

/** A problem as CodeMirror marks it: its range, else its whole line, else the start of the text. */
function toDiagnostic(problem: Problem, length: number, lineAt: (line: number) => { from: number; to: number }): Diagnostic {
  const line = problem.line === undefined ? undefined : lineAt(problem.line);
  const from = Math.min(problem.from ?? line?.from ?? 0, length);
  const to = Math.min(Math.max(problem.to ?? line?.to ?? from, from), length);
  return { from, to, severity: "error", source: problem.source === "service" ? "refused by the service" : undefined, message: problem.message };
}

/** A suggestion as CodeMirror offers it; accepting it replaces what was typed, quotes included. */
function completion(s: Suggestion, from: number, tail: number): Completion {
  return {
    label: s.label,
    type: s.type,
    detail: s.detail,
    info: s.info,
    apply: (view, picked, _match, typedTo) => {
      view.dispatch({
        changes: { from, to: Math.min(typedTo + tail, view.state.doc.length), insert: s.insert },
        selection: { anchor: from + s.cursor },
        annotations: pickedCompletion.of(picked),
        scrollIntoView: true,
      });
      // A new value with choices (an effect, a window, the operators of a condition): offer them.
      if (s.again) startCompletion(view);
    },
  };
}
