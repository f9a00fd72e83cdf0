// Property: any table (random kinds, nulls, NaN, -0.0, i64 extremes, Unicode, empty strings,
// runs and sequences that steer the builders to every encoding) written through the SDK in random
// batch sizes reads back equal to the model the test keeps, over random row ranges, and verifies
// deep. The model is the values as generated; nothing is compared with our own output.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { TetWriter, open, verify, type ColumnKind } from '../../lib/index';

const dir = mkdtempSync(join(tmpdir(), 'tet-tables-prop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Kind = Exclude<ColumnKind, 'timestamp' | 'date' | 'time'> | 'timestamp';
const I64_MIN = -(2n ** 63n), I64_MAX = 2n ** 63n - 1n;

interface Column { kind: Kind; values: (bigint | number | string | boolean | null)[] }

// Block-shaped generators: each run of rows follows one pattern, so blocks of 2048 rows get
// constants, sequences, narrow ranges, drift, runs, and noise.
const pattern = fc.constantFrom('constant', 'sequence', 'narrow', 'drift', 'runs', 'noise', 'extremes');

function intValues(n: number, pat: string, seed: number): bigint[] {
  let s = BigInt(seed);
  const next = () => (s = (s * 6364136223846793005n + 1442695040888963407n) & (2n ** 64n - 1n));
  const out: bigint[] = [];
  for (let i = 0; i < n; i++) {
    const r = next();
    switch (pat) {
      case 'constant': out.push(42n); break;
      case 'sequence': out.push(BigInt(i) * 7n - 1000n); break;
      case 'narrow': out.push(1_000_000n + (r % 100n)); break;
      case 'drift': out.push(10n ** 15n + BigInt(i) * 3n + (r % 3n)); break;
      case 'runs': out.push(BigInt(Math.floor(i / 300)) * 11n); break;
      case 'extremes': out.push([I64_MIN, I64_MAX, 0n, -1n][Number(r % 4n)]); break;
      default: out.push(BigInt.asIntN(64, r));
    }
  }
  return out;
}

function floatValues(n: number, pat: string, seed: number): number[] {
  const ints = intValues(n, pat === 'extremes' ? 'noise' : pat, seed);
  return ints.map((v, i) => (pat === 'extremes' ? [NaN, -0, 0, Infinity, -Infinity, 5e-324, 1.7976931348623157e308][i % 7]
    : pat === 'noise' ? Number(v) / 3 : Number(v) / 10));
}

const arbColumn = (rows: number): fc.Arbitrary<Column> => fc.record({
  kind: fc.constantFrom<Kind>('bool', 'int', 'float', 'str', 'timestamp'),
  pat: pattern, seed: fc.integer({ min: 1, max: 1e9 }), nullRate: fc.constantFrom(0, 0, 0.01, 0.3, 1),
  strs: fc.array(fc.string({ unit: 'grapheme', maxLength: 20 }), { minLength: 1, maxLength: 30 }),
}).map(({ kind, pat, seed, nullRate, strs }) => {
  const nullAt = (i: number) => nullRate > 0 && ((i * 2654435761 + seed) % 1000) / 1000 < nullRate;
  let values: Column['values'];
  if (kind === 'int' || kind === 'timestamp') values = intValues(rows, pat, seed);
  else if (kind === 'float') values = floatValues(rows, pat, seed);
  else if (kind === 'bool') values = Array.from({ length: rows }, (_, i) => (pat === 'constant' ? true : pat === 'runs' ? Math.floor(i / 500) % 2 === 0 : ((i * 7919 + seed) % 3) === 0));
  else values = Array.from({ length: rows }, (_, i) => (pat === 'constant' ? strs[0] : pat === 'sequence' ? `id-${i}` : strs[(i * 31 + seed) % strs.length]));
  return { kind, values: values.map((v, i) => (nullAt(i) ? null : v)) };
});

const arbTable = fc.integer({ min: 0, max: 6000 }).chain((rows) => fc.record({
  rows: fc.constant(rows),
  columns: fc.array(arbColumn(rows), { minLength: 1, maxLength: 4 }),
  batch: fc.integer({ min: 1, max: 3000 }),
  range: fc.tuple(fc.integer({ min: 0, max: rows }), fc.integer({ min: 0, max: rows })),
}));

function same(kind: Kind, got: unknown, want: unknown): boolean {
  if (kind === 'float') return Object.is(got, want);
  if (kind === 'bool') return got === (want ? 1 : 0);
  return got === want;
}

describe('tables round-trip (property)', () => {
  it('random tables read back equal to the model and verify deep', async () => {
    let run = 0;
    await fc.assert(fc.asyncProperty(arbTable, async ({ rows, columns, batch, range }) => {
      const path = join(dir, `t${run++}.tet`);
      const w = await TetWriter.create(path);
      const schema = Object.fromEntries(columns.map((c, i) => [`c${i}`, { kind: c.kind }]));
      const t = w.addTable({ name: 't', schema });
      for (let at = 0; at < rows; at += batch) {
        const b: Record<string, unknown> = {};
        columns.forEach((c, i) => { b[`c${i}`] = c.values.slice(at, at + batch); });
        await t.append(b);
      }
      await w.commit();
      const f = await open(path);
      try {
        expect(f.tables[0].rows).toBe(rows);
        const [lo, hi] = range[0] <= range[1] ? range : [range[1], range[0]];
        for (let i = 0; i < columns.length; i++) {
          const c = columns[i];
          const got = await f.readColumn('t', `c${i}`, { start: lo, stop: hi });
          expect(got.rows).toBe(hi - lo);
          const vals = got.values as ArrayLike<unknown>;
          for (let r = lo; r < hi; r++) {
            const want = c.values[r];
            const present = got.valid ? got.valid[r - lo] === 1 : true;
            if (want === null) { expect(present).toBe(false); continue; }
            expect(present).toBe(true);
            if (!same(c.kind, vals[r - lo], want)) expect({ column: i, row: r, got: vals[r - lo] }).toEqual({ column: i, row: r, got: want });
          }
        }
      } finally {
        f.close();
      }
      const report = await verify(path, { deep: true });
      expect(report.findings).toEqual([]);
    }), { numRuns: 50, seed: 20261201 });
  }, 240_000);
});
