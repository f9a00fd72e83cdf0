// The CLI's box tables (`tet info`, `--format table`): a head row and body rows in single-line box
// drawing, a rule between every two rows, one space of padding each side, text left-aligned, a cell
// of several lines ('\n') as tall as its row, each column as wide as its widest line. This is the
// drawing cli-table3 gave these views (same characters, same layout: test/unit/cli-box-table.test.ts
// compares the two on wide, combining, emoji, multi-line and empty text), without its per-cell
// option merging and repeated measuring: cli-table3 drew `tet info`'s one-row table in 2-3 ms of a
// fresh process and a 1,000-row grid in ~200 ms; this ~0.3 ms and ~15 ms (docs/performance.md "CLI
// start-up"). Text widths are string-width's (resolved to lib/cli/string-width.cjs in the bundle),
// loaded at the first table drawn.
import { lazy } from './lazy';

const stringWidth = lazy(() => require('string-width') as (text: string) => number);

const H = '\u2500';  // ─
const V = '\u2502';  // │

/** One rule line: `left`, each column's run of ─, `mid` between columns, `right`. */
function rule(widths: readonly number[], left: string, mid: string, right: string): string {
  return left + widths.map((w) => H.repeat(w + 2)).join(mid) + right;
}

/**
 * The table's text (lines joined by '\n', no trailing newline). Every row is drawn with
 * `head.length` cells: a missing cell is empty, extra cells are not drawn.
 */
export function boxTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const n = head.length;
  // each row as its cells' lines, each line with its width
  const drawn = [head, ...rows].map((row) => {
    const cells: { text: string; width: number }[][] = [];
    for (let c = 0; c < n; c++) {
      cells.push(String(row[c] ?? '').split('\n').map((text) => ({ text, width: stringWidth()(text) })));
    }
    return cells;
  });
  const widths = new Array<number>(n).fill(0);
  for (const row of drawn) {
    row.forEach((lines, c) => { for (const l of lines) if (l.width > widths[c]) widths[c] = l.width; });
  }
  const out = [rule(widths, '\u250c', '\u252c', '\u2510')];  // ┌ ┬ ┐
  const between = rule(widths, '\u251c', '\u253c', '\u2524');  // ├ ┼ ┤
  drawn.forEach((row, r) => {
    if (r > 0) out.push(between);
    const height = Math.max(1, ...row.map((lines) => lines.length));
    for (let i = 0; i < height; i++) {
      let line = V;
      row.forEach((lines, c) => {
        const l = lines[i] ?? { text: '', width: 0 };
        line += ` ${l.text}${' '.repeat(widths[c] - l.width)} ${V}`;
      });
      out.push(line);
    }
  });
  out.push(rule(widths, '\u2514', '\u2534', '\u2518'));  // └ ┴ ┘
  return out.join('\n');
}
