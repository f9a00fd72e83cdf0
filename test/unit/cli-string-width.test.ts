// lib/cli/string-width.cjs: the width the CLI's bundled table and bar packages measure text with.
// The expectation is string-width's own answer (the package the shim stands in front of), for
// every code point the shim answers without it, for strings of them, and for text it must hand
// on (wide, combining, emoji, escape sequences).
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const stringWidth = require('string-width') as (s: string) => number;
const shim = require('../../lib/cli/string-width.cjs') as ((s: string) => number) & { default: unknown };

// The code points the shim answers itself (its NARROW class), listed here independently.
const NARROW_RANGES: [number, number][] = [[0x20, 0x7e], [0xa0, 0x2ff], [0x2010, 0x2027], [0x2500, 0x257f]];

describe('the CLI string width', () => {
  it('equals string-width for every code point it answers itself, alone, doubled and in a word', () => {
    let checked = 0;
    for (const [lo, hi] of NARROW_RANGES) {
      for (let c = lo; c <= hi; c++) {
        const ch = String.fromCodePoint(c);
        for (const s of [ch, ch + ch, `a${ch}b`]) {
          if (shim(s) !== stringWidth(s)) throw new Error(`U+${c.toString(16)} in ${JSON.stringify(s)}: ${shim(s)} vs ${stringWidth(s)}`);
        }
        checked++;
      }
    }
    expect(checked).toBe(0x5f + 0x260 + 0x18 + 0x80);
  });

  it('hands wide, combining, emoji, control and escaped text to string-width', () => {
    for (const s of ['日本語', 'e\u0301', '👍', '🇩🇪', '1\uFE0F\u20E3', '\u001b[31mred\u001b[39m', 'a\u200db', 'tab\there', '\u00ad', '│ 1.24x │', '…', '']) {
      expect(shim(s), JSON.stringify(s)).toBe(stringWidth(s));
    }
    expect(shim('日本語')).toBe(6);
    expect(shim('\u001b[31mred\u001b[39m')).toBe(3);
    expect(shim.default).toBe(shim);
  });

  it('the table tet info draws has lines of one width', () => {
    const Table = require('cli-table3') as typeof import('cli-table3');
    const t = new Table({ head: ['name', 'shape', 'ratio'], style: { head: [], border: [] } });
    t.push(['temperature', '120 x 32 x 64', '1.24x'], ['très long nom…', '1', '—']);
    const widths = t.toString().split('\n').map((l) => shim(l));
    expect(new Set(widths).size).toBe(1);
    expect(widths[0]).toBe(t.toString().split('\n')[0].length);
  });
});
