// where_plan on the spec's obs table (bench/lib/obs.mjs, 600,000 rows = 60 hours of 10^4 rows):
// Q1b (ts in one day) decodes at most the two blocks the day's edges cut and reads no payload of
// a block outside the day; Q4a (event_id = one existing value) decodes at most 2 blocks. Counts
// and the looked-up row are checked against the generator's formulas by hand.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TetWriter, open, type TetFile } from '../../lib/index';

// bench/lib/obs.mjs is plain JS without types: the parts used here
const { OBS_SCHEMA, batchBuffers, eventId, fillBatch, mixed, splitmix64Of, stationTable, TS0_US, HOUR_US } =
  // @ts-expect-error plain .mjs bench module without types
  (await import('../../bench/lib/obs.mjs')) as {
  OBS_SCHEMA: any;
  batchBuffers: (n: number) => unknown;
  eventId: (hi: number, lo: number) => string;
  fillBatch: (buf: unknown, stations: unknown, start: number, n: number) => any;
  mixed: { hi: number; lo: number };
  splitmix64Of: (x: number) => void;
  stationTable: () => unknown;
  TS0_US: number;
  HOUR_US: number;
};

const ROWS = 600_000;
const BLOCK = 2048;
const dir = mkdtempSync(join(tmpdir(), 'tet-wp-'));
let f: TetFile;

beforeAll(async () => {
  const path = join(dir, 'obs.tet');
  const w = await TetWriter.create(path);
  const table = w.addTable({ name: 'obs', schema: OBS_SCHEMA });
  const stations = stationTable();
  const buf = batchBuffers(100_000);
  for (let start = 0; start < ROWS; start += 100_000) await table.append(fillBatch(buf, stations, start, 100_000));
  await w.commit();
  f = await open(path);
}, 120_000);

afterAll(() => {
  f?.close();
  rmSync(dir, { recursive: true, force: true });
});

const iso = (us: number) => new Date(us / 1000).toISOString();
async function plan(doc: object) {
  const e = (await f.query({ table: 'obs', ...doc })).execution! as unknown as Record<string, any>;
  return { e, wp: e.where_plan.obs as Record<string, number>, payload: e.where_plan.obs.payload_bytes_read as number };
}

describe('where_plan on obs', () => {
  it('Q1b: ts in one day decodes only the edge blocks and reads nothing outside the day', async () => {
    const ts = f.table('obs').columns.find((c) => c.name === 'ts')!;
    const blocks = Math.ceil(ROWS / BLOCK);
    expect(ts.blocks).toBe(blocks);
    // day 2 = hours 24..47 = rows 240,000..479,999: blocks 117..234, of which 117 and 234 are cut
    const lo = TS0_US + 24 * HOUR_US, hi = lo + 24 * HOUR_US;
    const { e, wp, payload } = await plan({ where: [{ column: 'ts', range: [iso(lo), iso(hi)] }], count: [] });
    expect(e.operation_element_count).toBe(240_000);
    expect(wp).toMatchObject({ rows: ROWS, selected: 240_000, blocks });
    expect(wp.blocks_decoded).toBeLessThanOrEqual(2);
    expect(wp.blocks_zonemap_resolved + wp.blocks_decoded + wp.blocks_index_pruned).toBe(blocks);
    // the payload read is at most that of the two cut blocks: `ts >= lo` cuts only block 117 and
    // `ts < hi` only block 234, each decoding one block at most
    const from = await plan({ where: [{ column: 'ts', ge: iso(lo) }], count: [] });
    const until = await plan({ where: [{ column: 'ts', lt: iso(hi) }], count: [] });
    expect(from.e.operation_element_count).toBe(ROWS - 240_000);
    expect(until.e.operation_element_count).toBe(480_000);
    expect(from.wp.blocks_decoded).toBeLessThanOrEqual(1);
    expect(until.wp.blocks_decoded).toBeLessThanOrEqual(1);
    expect(payload).toBeGreaterThan(0);
    expect(payload).toBeLessThanOrEqual(from.payload + until.payload);
    // one block each at most: no more than one plain 2,048-row i64 block (+ its mask), whatever
    // the encoding (ts is a run_directory column: its cut blocks are small Rle leaves)
    for (const q of [from, until]) expect(q.payload).toBeLessThanOrEqual(2048 * 8 + 256);
    // a day wholly outside the table, and one that ends on the table's first hour boundary:
    // zone maps decide every block without reading a payload byte
    const later = TS0_US + 100 * HOUR_US;
    const out = await plan({ where: [{ column: 'ts', range: [iso(later), iso(later + 24 * HOUR_US)] }], count: [] });
    expect(out.e.operation_element_count).toBe(0);
    expect(out.wp.blocks_decoded).toBe(0);
    expect(out.payload).toBe(0);
    const all = await plan({ where: [{ column: 'ts', range: [iso(TS0_US - 24 * HOUR_US), iso(TS0_US + 60 * HOUR_US)] }], count: [] });
    expect(all.e.operation_element_count).toBe(ROWS);
    expect(all.wp.blocks_decoded).toBe(0);
    expect(all.payload).toBe(0);
  });

  it('Q4a: event_id = one existing value decodes at most 2 blocks and finds the row', async () => {
    const row = 431_217;
    splitmix64Of(row);
    const id = eventId(mixed.hi, mixed.lo);
    const { e, wp } = await plan({ where: [{ column: 'event_id', eq: id }], columns: ['ts', 'station_id', 'event_id'] });
    expect(wp.selected).toBe(1);
    expect(wp.blocks_decoded).toBeLessThanOrEqual(2);
    expect(wp.blocks_index_pruned).toBeGreaterThanOrEqual(wp.blocks - 2);
    const rows = e.rows as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    expect(rows[0].station_id).toBe(row % 10_000);
    expect(rows[0].event_id).toBe(id);
    expect(rows[0].ts).toBe(iso(TS0_US + Math.floor(row / 10_000) * HOUR_US).replace('.000Z', 'Z'));
    // a value that is not there: nothing decoded beyond index false positives
    const miss = await plan({ where: [{ column: 'event_id', eq: 'E0000000000000000' }], count: [] });
    expect(miss.e.operation_element_count).toBe(0);
    expect(miss.wp.blocks_decoded).toBeLessThanOrEqual(2);
  });
});
