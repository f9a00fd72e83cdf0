// lib/cli/box-table.ts: the CLI's box tables. The expectation is cli-table3's drawing of the same
// head and rows with the options the CLI used to pass it (no colours; the package the module
// replaced, kept as a devDependency for this comparison), plus a few layouts written out by hand.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { boxTable } from '../../lib/cli/box-table';

const require = createRequire(import.meta.url);
const Table = require('cli-table3') as typeof import('cli-table3');

function reference(head: string[], rows: string[][]): string {
  const t = new Table({ head, style: { head: [], border: [] } });
  for (const r of rows) t.push(r);
  return t.toString();
}

describe('boxTable', () => {
  it('draws what cli-table3 draws', () => {
    const cases: [string[], string[][]][] = [
      [['name', 'dtype', 'shape', 'chunk', 'grid', 'codecs', 'logical', 'stored', 'ratio'],
        [['temperature', 'f32', '120 x 32 x 64', '30 x 16 x 32', '4 x 2 x 2 (16)', 'zstd 16', '960.0 KiB', '772.8 KiB', '1.24x']]],
      [['query', ''], [['status', 'ok'], ['dataset', 'temperature'], ['shape', '[120,32,64]']]],
      [['key', 'positions', 'mean'], [['DE', '0', '1.5'], ['', '', ''], ['null', '12', '-3e-7']]],
      [['wide', 'x'], [['日本語', 'a'], ['é', '中文字'], ['👍', '🇩🇪'], ['e\u0301', 'a\u200db']]],
      [['multi', 'line'], [['a\nbb\nccc', 'one'], ['', 'x\ny']]],
      [['only', 'head'], []],
      [['', ''], [['', '']]],
      [['très long nom…', '—'], [['│ box │', '─']]],
    ];
    for (const [head, rows] of cases) expect(boxTable(head, rows), JSON.stringify([head, rows])).toBe(reference(head, rows));
  });

  it('draws a 1,000-row grid as cli-table3 does', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => [`k${i}`, String(i * 7), (i / 7).toFixed(i % 9)]);
    expect(boxTable(['key', 'positions', 'mean'], rows)).toBe(reference(['key', 'positions', 'mean'], rows));
  });

  it('lays out a small table as written by hand', () => {
    expect(boxTable(['a', 'bcd'], [['xy', ''], ['1\n2', 'z']])).toBe([
      '┌────┬─────┐',
      '│ a  │ bcd │',
      '├────┼─────┤',
      '│ xy │     │',
      '├────┼─────┤',
      '│ 1  │ z   │',
      '│ 2  │     │',
      '└────┴─────┘',
    ].join('\n'));
  });

  it('draws every row with the head\'s cells: missing ones empty, extra ones left out', () => {
    expect(boxTable(['a', 'b'], [['1'], ['2', '3', '4']])).toBe([
      '┌───┬───┐', '│ a │ b │', '├───┼───┤', '│ 1 │   │', '├───┼───┤', '│ 2 │ 3 │', '└───┴───┘',
    ].join('\n'));
  });
});
