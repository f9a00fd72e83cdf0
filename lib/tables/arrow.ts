// Stored tables as Apache Arrow tables (apache-arrow, loaded only when toArrow() is called).
import * as arrow from 'apache-arrow';
import type { TableInfo } from './io';
import type { ColumnValues, TimeUnit } from './types';

const TS_UNIT: Record<TimeUnit, arrow.TimeUnit> = {
  s: arrow.TimeUnit.SECOND, ms: arrow.TimeUnit.MILLISECOND, us: arrow.TimeUnit.MICROSECOND, ns: arrow.TimeUnit.NANOSECOND,
};

/** Arrow's validity / boolean form: one bit per row, least significant first. */
function bits(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array((bytes.length + 7) >> 3);
  for (let i = 0; i < bytes.length; i++) if (bytes[i]) out[i >> 3] |= 1 << (i & 7);
  return out;
}

function nulls(v: ColumnValues): { nullBitmap?: Uint8Array; nullCount: number } {
  if (!v.valid) return { nullCount: 0 };
  let n = 0;
  for (let i = 0; i < v.valid.length; i++) n += v.valid[i] ? 0 : 1;
  return { nullBitmap: bits(v.valid), nullCount: n };
}

function vectorOf(v: ColumnValues, col: TableInfo['columns'][number]): arrow.Vector {
  const length = v.rows;
  const nb = nulls(v);
  switch (v.kind) {
    case 'bool': return arrow.makeVector(arrow.makeData({ type: new arrow.Bool(), length, ...nb, data: bits(v.values as Uint8Array) }));
    case 'int': return arrow.makeVector(arrow.makeData({ type: new arrow.Int64(), length, ...nb, data: v.values as BigInt64Array }));
    case 'float': return arrow.makeVector(arrow.makeData({ type: new arrow.Float64(), length, ...nb, data: v.values as Float64Array }));
    case 'date': return arrow.makeVector(arrow.makeData({ type: new arrow.DateDay(), length, ...nb, data: v.values as Int32Array }));
    case 'time': return arrow.makeVector(arrow.makeData({ type: new arrow.TimeMicrosecond(), length, ...nb, data: v.values as BigInt64Array }));
    case 'timestamp': {
      const type = new arrow.Timestamp(TS_UNIT[col.unit ?? 'us'], (col.tz ?? 'UTC') === 'UTC' ? 'UTC' : null);
      return arrow.makeVector(arrow.makeData({ type, length, ...nb, data: v.values as BigInt64Array }));
    }
    case 'str': {
      const strs = v.values as string[];
      const enc = new TextEncoder();
      const parts = strs.map((s) => enc.encode(s));
      const total = parts.reduce((a, p) => a + p.length, 0);
      const large = total > 0x7fffffff;
      const offsets = large ? new BigInt64Array(length + 1) : new Int32Array(length + 1);
      const data = new Uint8Array(total);
      let at = 0;
      parts.forEach((p, i) => {
        data.set(p, at);
        at += p.length;
        if (large) (offsets as BigInt64Array)[i + 1] = BigInt(at);
        else (offsets as Int32Array)[i + 1] = at;
      });
      return large
        ? arrow.makeVector(arrow.makeData({ type: new arrow.LargeUtf8(), length, ...nb, data, valueOffsets: offsets as BigInt64Array }))
        : arrow.makeVector(arrow.makeData({ type: new arrow.Utf8(), length, ...nb, data, valueOffsets: offsets as Int32Array }));
    }
  }
}

export async function tableToArrow(t: TableInfo, columns: string[], read: (column: string) => Promise<ColumnValues>): Promise<arrow.Table> {
  const vectors: Record<string, arrow.Vector> = {};
  for (const name of columns) {
    const values = await read(name);  // rejects TET_QUERY_UNKNOWN_COLUMN for a wrong name
    const col = t.columns.find((c) => c.name === name);
    if (col) vectors[name] = vectorOf(values, col);
  }
  return new arrow.Table(vectors);
}
