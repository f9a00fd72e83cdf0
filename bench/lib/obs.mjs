// The `obs` benchmark table of ../shared/spec/tables_and_filters.md (appendix), as one generator
// with two faces: JS (fills typed-array batches for tetration's TableWriter.append) and DuckDB
// SQL (macros over UBIGINT for `CREATE TABLE obs AS SELECT ... FROM range(N)`). bench/tables.mjs
// checks that both faces give the same values before anything is timed.
//
// h(x) is splitmix64 (Steele, Lea & Flood 2014; reference C: x += 0x9e3779b97f4a7c15, then the
// xor-shift / multiply finalizer). At 10^8 rows a BigInt per value is far too slow, so the JS
// face works on two 32-bit limbs with Math.imul and >>>.

export const ROWS_PER_HOUR = 10_000;
export const STATIONS = 10_000;
/** 2020-01-01T00:00:00Z in µs since the epoch. */
export const TS0_US = 1_577_836_800_000_000;
export const HOUR_US = 3_600_000_000;

const GOLDEN_HI = 0x9e3779b9, GOLDEN_LO = 0x7f4a7c15;
const MUL1_HI = 0xbf58476d, MUL1_LO = 0x1ce4e5b9;
const MUL2_HI = 0x94d049bb, MUL2_LO = 0x133111eb;
const TWO32 = 4294967296;

/** The result of the last {@link splitmix64} call: high and low 32 bits (no allocation per call). */
export const mixed = { hi: 0, lo: 0 };

/** High 32 bits of the 64-bit product of two u32 (16-bit halves keep every product exact). */
function mulHigh32(a, b) {
  const a0 = a & 0xffff, a1 = a >>> 16, b0 = b & 0xffff, b1 = b >>> 16;
  const p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  return (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16)) >>> 0;
}

/**
 * splitmix64 of the 64-bit value hi·2^32 + lo (both u32); the result lands in {@link mixed}.
 * Each step is the reference C line noted beside it, on limbs.
 */
export function splitmix64(hi, lo) {
  // z = x + 0x9e3779b97f4a7c15 (mod 2^64)
  let l = lo + GOLDEN_LO;
  let h = (hi + GOLDEN_HI + (l > 0xffffffff ? 1 : 0)) >>> 0;
  l >>>= 0;
  // z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
  l = (l ^ ((l >>> 30) | (h << 2))) >>> 0;
  h = (h ^ (h >>> 30)) >>> 0;
  let ph = (mulHigh32(l, MUL1_LO) + Math.imul(l, MUL1_HI) + Math.imul(h, MUL1_LO)) >>> 0;
  l = Math.imul(l, MUL1_LO) >>> 0;
  h = ph;
  // z = (z ^ (z >> 27)) * 0x94d049bb133111eb
  l = (l ^ ((l >>> 27) | (h << 5))) >>> 0;
  h = (h ^ (h >>> 27)) >>> 0;
  ph = (mulHigh32(l, MUL2_LO) + Math.imul(l, MUL2_HI) + Math.imul(h, MUL2_LO)) >>> 0;
  l = Math.imul(l, MUL2_LO) >>> 0;
  h = ph;
  // return z ^ (z >> 31)
  mixed.lo = (l ^ ((l >>> 31) | (h << 1))) >>> 0;
  mixed.hi = (h ^ (h >>> 31)) >>> 0;
}

/** splitmix64 of a non-negative safe integer x, into {@link mixed}. */
export function splitmix64Of(x) {
  splitmix64(Math.floor(x / TWO32) >>> 0, x >>> 0);
}

/** (hi·2^32 + lo) mod m for a small m (every intermediate stays below 2^53). */
export function mod64(hi, lo, m) {
  return ((hi % m) * (TWO32 % m) + (lo % m)) % m;
}

/** u(x) = h(x) / 2^64: the u64 rounded once to f64 (as DuckDB's UBIGINT → DOUBLE cast), then scaled. */
export function unitOf(hi, lo) {
  return (hi * TWO32 + lo) / 18446744073709551616;
}

// ---- the columns --------------------------------------------------------------------------

/** The 200 country codes: index k is letters (A + ⌊k/26⌋, A + k mod 26), "AA" .. "HR". */
export function countryCode(k) {
  return String.fromCharCode(65 + Math.floor(k / 26), 65 + (k % 26));
}

/** Country index of a station: ⌊200 · u(station)^2⌋ (skewed towards the low codes). */
export function countryIndex(station) {
  splitmix64Of(station);
  const u = unitOf(mixed.hi, mixed.lo);
  return Math.floor(200 * (u * u));
}

/**
 * temp_c in tenths of a degree is the spec's formula times 10, rounded: 10·sin(2π·hour/24) is
 * the only term that is not already a whole number of tenths, so its rounding is the formula's.
 * It is rounded here (24 values, Math.round on 100·sin) and handed to DuckDB as a list literal,
 * so the two engines never depend on their libm's sin agreeing to the last bit.
 */
export const SIN_TENTHS = Array.from({ length: 24 }, (_, k) => Math.round(100 * Math.sin((2 * Math.PI * k) / 24)));

/** Per-station attributes (10^4 of them), computed once. */
export function stationTable() {
  const country = new Array(STATIONS), name = new Array(STATIONS);
  const elevation = new Int32Array(STATIONS), tempBias = new Int32Array(STATIONS);
  for (let s = 0; s < STATIONS; s++) {
    const c = countryCode(countryIndex(s));
    splitmix64Of(s);
    country[s] = c;
    name[s] = `ST-${String(s).padStart(5, '0')}-${c}`;
    elevation[s] = mod64(mixed.hi, mixed.lo, 4000);
    tempBias[s] = mod64(mixed.hi, mixed.lo, 200);
  }
  return { country, name, elevation, tempBias };
}

/** The schema handed to TetWriter.addTable (spec kinds). */
export const OBS_SCHEMA = {
  ts: { kind: 'timestamp', unit: 'us', tz: 'UTC' },
  station_id: { kind: 'int' },
  country: { kind: 'str' },
  station_name: { kind: 'str' },
  elevation_m: { kind: 'int' },
  temp_c: { kind: 'float' },
  pressure_pa: { kind: 'int' },
  qc_ok: { kind: 'bool' },
  event_id: { kind: 'str' },
};
export const OBS_COLUMNS = Object.keys(OBS_SCHEMA);

/** Buffers for one batch of up to `capacity` rows (reused from batch to batch). */
export function batchBuffers(capacity) {
  const ts = new BigInt64Array(capacity);
  return {
    ts, tsWords: new Uint32Array(ts.buffer),
    station_id: new Int32Array(capacity), country: new Array(capacity), station_name: new Array(capacity),
    elevation_m: new Int32Array(capacity), temp_c: new Float64Array(capacity), tempValid: new Uint8Array(capacity),
    pressure_pa: new Int32Array(capacity), qc_ok: new Uint8Array(capacity), event_id: new Array(capacity),
  };
}

const HEX = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/** "E" + the 16 lower-case hex digits of hi·2^32 + lo, as one flat string. */
export function eventId(hi, lo) {
  return String.fromCharCode(69,
    HEX[hi >>> 28], HEX[(hi >>> 24) & 15], HEX[(hi >>> 20) & 15], HEX[(hi >>> 16) & 15],
    HEX[(hi >>> 12) & 15], HEX[(hi >>> 8) & 15], HEX[(hi >>> 4) & 15], HEX[hi & 15],
    HEX[lo >>> 28], HEX[(lo >>> 24) & 15], HEX[(lo >>> 20) & 15], HEX[(lo >>> 16) & 15],
    HEX[(lo >>> 12) & 15], HEX[(lo >>> 8) & 15], HEX[(lo >>> 4) & 15], HEX[lo & 15]);
}

/**
 * Fills rows [start, start + n) into `buf` (from batchBuffers) and returns the batch for
 * TableWriter.append. The arrays are views of `buf`: they must not change until the append settles.
 */
export function fillBatch(buf, stations, start, n) {
  const { tsWords, station_id, country, station_name, elevation_m, temp_c, tempValid, pressure_pa, qc_ok, event_id } = buf;
  for (let k = 0; k < n; k++) {
    const i = start + k;
    const hour = Math.floor(i / ROWS_PER_HOUR);
    const s = i % STATIONS;
    const ts = TS0_US + hour * HOUR_US;  // < 2^53: exact
    tsWords[2 * k] = ts % TWO32;
    tsWords[2 * k + 1] = ts / TWO32;
    station_id[k] = s;
    country[k] = stations.country[s];
    station_name[k] = stations.name[s];
    elevation_m[k] = stations.elevation[s];

    splitmix64Of(i);
    const hiI = mixed.hi, loI = mixed.lo;
    event_id[k] = eventId(hiI, loI);
    splitmix64Of(7 * i);
    const present = mod64(mixed.hi, mixed.lo, 200) !== 0;
    tempValid[k] = present ? 1 : 0;
    // tenths: 150 - 100 + 10·sin term + (h(s) mod 200) + (h(i) mod 100 - 50)
    const tenths = 50 + SIN_TENTHS[hour % 24] + stations.tempBias[s] + mod64(hiI, loI, 100) - 50;
    temp_c[k] = present ? tenths / 10 : 0;

    splitmix64Of(3 * i);
    pressure_pa[k] = 98000 + mod64(mixed.hi, mixed.lo, 5000);
    splitmix64Of(11 * i);
    qc_ok[k] = mod64(mixed.hi, mixed.lo, 100) !== 0 ? 1 : 0;
  }
  const sub = (a) => (a.length === n ? a : a.subarray(0, n));
  const arr = (a) => (a.length === n ? a : a.slice(0, n));
  return {
    ts: sub(buf.ts), station_id: sub(station_id), country: arr(country), station_name: arr(station_name),
    elevation_m: sub(elevation_m), temp_c: sub(temp_c), pressure_pa: sub(pressure_pa), qc_ok: sub(qc_ok),
    event_id: arr(event_id), valid: { temp_c: sub(tempValid) },
  };
}

// ---- the DuckDB face ----------------------------------------------------------------------

const U = (v) => `${BigInt(v)}::UBIGINT`;
const LOW32 = U(0xffffffff);
const K_ADD = (1n << 64n) - 0x9e3779b97f4a7c15n;

/**
 * DuckDB macros: the same splitmix64 over UBIGINT. DuckDB raises on integer overflow, so the
 * addition wraps by hand (x ≥ 2^64 − G: x − (2^64 − G)) and each multiply works on 32-bit halves
 * (every partial product of two halves is < 2^64; each is masked before the sum; a value is
 * masked to 32 bits before `<< 32`, which DuckDB also checks).
 */
export const DUCKDB_MACROS = [
  `CREATE OR REPLACE TEMP MACRO sm_add_golden(x) AS CASE WHEN x >= ${U(K_ADD)} THEN x - ${U(K_ADD)} ELSE x + ${U(0x9e3779b97f4a7c15n)} END`,
  `CREATE OR REPLACE TEMP MACRO sm_xorshift(z, s) AS xor(z, z >> s)`,
  `CREATE OR REPLACE TEMP MACRO sm_mul_lo(zl, zh, ch, cl) AS
     ((((((zl * cl) >> 32) + ((zl * ch) & ${LOW32}) + ((zh * cl) & ${LOW32})) & ${LOW32}) << 32) | ((zl * cl) & ${LOW32}))`,
  `CREATE OR REPLACE TEMP MACRO sm_mul(z, ch, cl) AS sm_mul_lo(z & ${LOW32}, z >> 32, ch, cl)`,
  `CREATE OR REPLACE TEMP MACRO splitmix64(x) AS
     sm_xorshift(sm_mul(sm_xorshift(sm_mul(sm_xorshift(sm_add_golden(x::UBIGINT), 30),
       ${U(MUL1_HI)}, ${U(MUL1_LO)}), 27), ${U(MUL2_HI)}, ${U(MUL2_LO)}), 31)`,
];

/** SQL of the obs table's rows [0, rows) in row order (the JS face's formulas, one for one). */
export function obsSelectSql(rows) {
  const sinList = `([${SIN_TENTHS.join(', ')}]::BIGINT[])`;
  return `
WITH r AS (
  SELECT range AS i, range // ${ROWS_PER_HOUR} AS hour, range % ${STATIONS} AS s,
         splitmix64(range) AS hi_, splitmix64(range % ${STATIONS}) AS hs
  FROM range(${rows})
)
SELECT
  make_timestamp(${TS0_US} + hour * ${HOUR_US}) AS ts,
  s AS station_id,
  chr((65 + cidx // 26)::INTEGER) || chr((65 + cidx % 26)::INTEGER) AS country,
  'ST-' || lpad(s::VARCHAR, 5, '0') || '-' || chr((65 + cidx // 26)::INTEGER) || chr((65 + cidx % 26)::INTEGER) AS station_name,
  (hs % 4000)::BIGINT AS elevation_m,
  CASE WHEN splitmix64(7 * i) % 200 = 0 THEN NULL
       ELSE (50 + ${sinList}[hour % 24 + 1] + (hs % 200)::BIGINT + (hi_ % 100)::BIGINT - 50)::DOUBLE / 10::DOUBLE END AS temp_c,
  (98000 + splitmix64(3 * i) % 5000)::BIGINT AS pressure_pa,
  splitmix64(11 * i) % 100 <> 0 AS qc_ok,
  'E' || lpad(lower(hex(hi_)), 16, '0') AS event_id
FROM (SELECT *, floor(200::DOUBLE * ((hs::DOUBLE / 18446744073709551616::DOUBLE) * (hs::DOUBLE / 18446744073709551616::DOUBLE)))::BIGINT AS cidx FROM r)`;
}
