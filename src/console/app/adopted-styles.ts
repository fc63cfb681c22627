// CodeMirror styles itself through style-mod, which writes its rules into a <style> element in the
// document: an inline style, which the console's CSP (style-src 'self') refuses, leaving the editor
// unstyled. A constructed style sheet adopted by the document is not inline and the CSP lets it
// apply (style-mod already uses one inside a shadow root). The console's build hands CodeMirror
// this StyleModule in place of style-mod's own (./build.ts, adoptedStyles): the same class, with a
// mount() that adopts one sheet per document. Why not 'unsafe-inline' or a nonce: docs/decisions.md.
import { StyleModule as Base } from "style-mod";

type Root = Parameters<typeof Base.mount>[0];

// One sheet per document, with its modules in mount order (a later mount may put a module between).
const sheets = new WeakMap<Document, { sheet: CSSStyleSheet; modules: Base[] }>();

export class StyleModule extends Base {
  static override mount(root: Root, modules: Base | readonly Base[], options?: { nonce?: string }): void {
    const doc = root as Document;
    // A shadow root, or a browser without constructed sheets: style-mod's own way.
    if (!(root instanceof Document) || !doc.adoptedStyleSheets || typeof CSSStyleSheet === "undefined") return Base.mount(root, modules, options);
    let set = sheets.get(doc);
    if (!set) sheets.set(doc, (set = { sheet: new CSSStyleSheet(), modules: [] }));
    let changed = false;
    let next = 0;
    for (const module of Array.isArray(modules) ? modules : [modules as Base]) {
      let at = set.modules.indexOf(module);
      // Asked for before a module it used to follow: it moves here, as style-mod does.
      if (at > -1 && at < next) {
        set.modules.splice(at, 1);
        next--;
        at = -1;
      }
      if (at === -1) {
        set.modules.splice(next++, 0, module);
        changed = true;
      } else next = at + 1;
    }
    if (changed) set.sheet.replaceSync(set.modules.map((m) => m.getRules()).join("\n"));
    if (!doc.adoptedStyleSheets.includes(set.sheet)) doc.adoptedStyleSheets = [set.sheet, ...doc.adoptedStyleSheets];
  }
}
