// A line diff of two texts (two policy versions, pretty-printed), small enough to keep in the
// console's size budget: common head and tail trimmed, then a longest common subsequence of lines.

export interface DiffLine {
  op: "same" | "add" | "del";
  text: string;
}

// Above this many cells the table would cost too much: the middle is shown as removed, then added.
const MAX_CELLS = 4_000_000;

/** The lines of `before` and `after` in order, each kept, added or deleted; deletions come first at a change. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split("\n");
  const b = after.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: "same", text }));
  const n = x.length;
  const m = y.length;
  if (n * m > MAX_CELLS) {
    for (const text of x) out.push({ op: "del", text });
    for (const text of y) out.push({ op: "add", text });
  } else {
    // common[i][j]: the longest common subsequence of x[i..] and y[j..], so the walk can go forward.
    const width = m + 1;
    const common = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        common[i * width + j] = x[i] === y[j] ? common[(i + 1) * width + j + 1] + 1 : Math.max(common[(i + 1) * width + j], common[i * width + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) {
        out.push({ op: "same", text: x[i++] });
        j++;
      } else if (j >= m || (i < n && common[(i + 1) * width + j] >= common[i * width + j + 1])) out.push({ op: "del", text: x[i++] });
      else out.push({ op: "add", text: y[j++] });
    }
  }
  for (const text of a.slice(a.length - tail)) out.push({ op: "same", text });
  return out;
}
