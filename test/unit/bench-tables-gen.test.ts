// The obs-table generator of bench/tables.mjs (bench/lib/obs.mjs): its 32-bit-limb splitmix64
// against the reference C algorithm written here in BigInt, the known first outputs of the
// reference generator, and the column formulas of the spec's appendix on hand-checked rows.
import { describe, expect, it } from 'vitest';

interface ObsBatch {
  ts: BigInt64Array; station_id: Int32Array; country: string[]; station_name: string[]; elevation_m: Int32Array;
  temp_c: Float64Array; pressure_pa: Int32Array; qc_ok: Uint8Array; event_id: string[]; valid: { temp_c: Uint8Array };
}
// @ts-expect-error plain .mjs bench module without types
const obs = (await import('../../bench/lib/obs.mjs')) as {
  mixed: { hi: number; lo: number };
  splitmix64(hi: number, lo: number): void;
  splitmix64Of(x: number): void;
  mod64(hi: number, lo: number, m: number): number;
  unitOf(hi: number, lo: number): number;
  countryCode(k: number): string;
  stationTable(): unknown;
  batchBuffers(capacity: number): unknown;
  fillBatch(buf: unknown, stations: unknown, start: number, n: number): ObsBatch;
};

const M64 = (1n << 64n) - 1n;

/** splitmix64's output for state x (Steele, Lea & Flood; Vigna's reference C), in BigInt. */
function splitmix64Ref(x: bigint): bigint {
  let z = (x + 0x9e3779b97f4a7c15n) & M64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
  return z ^ (z >> 31n);
}

function limbs(x: bigint): bigint {
  obs.splitmix64(Number(x >> 32n), Number(x & 0xffffffffn));
  return (BigInt(obs.mixed.hi) << 32n) | BigInt(obs.mixed.lo);
}

describe('bench obs generator: splitmix64 on 32-bit limbs', () => {
  it('gives the reference generator\'s published outputs', () => {
    // Seed 0: the first outputs of splitmix64 (state += golden each call) are h(0), h(golden), ...
    expect(limbs(0n)).toBe(0xe220a8397b1dcdafn);
    expect(limbs(0x9e3779b97f4a7c15n)).toBe(0x6e789e6aa1b965f4n);
    expect(limbs((2n * 0x9e3779b97f4a7c15n) & M64)).toBe(0x06c45d188009454fn);
  });

  it('equals the BigInt reference at 0, 1, 2^32, 2^53, 2^63, 2^64 - 1 and their neighbours', () => {
    const edges = [0n, 1n, 1n << 32n, 1n << 53n, 1n << 63n, M64];
    for (const e of edges) {
      for (let d = -3n; d <= 3n; d++) {
        const x = (e + d) & M64;
        expect(limbs(x), `x = ${x}`).toBe(splitmix64Ref(x));
      }
    }
    expect(limbs(M64)).toBe(splitmix64Ref(M64));
    expect(limbs(1n)).toBe(splitmix64Ref(1n));
  });

  it('equals the BigInt reference on 5,000 pseudo-random x (carries in every limb)', () => {
    let s = 0x853c49e6748fea9bn;
    for (let k = 0; k < 5000; k++) {
      s = (s * 6364136223846793005n + 1442695040888963407n) & M64;
      expect(limbs(s)).toBe(splitmix64Ref(s));
    }
  });

  it('splitmix64Of(x) splits a safe integer into limbs correctly', () => {
    for (const x of [0, 1, 4294967295, 4294967296, 3 * 99_999_999, Number.MAX_SAFE_INTEGER]) {
      obs.splitmix64Of(x);
      expect((BigInt(obs.mixed.hi) << 32n) | BigInt(obs.mixed.lo)).toBe(splitmix64Ref(BigInt(x)));
    }
  });
});

describe('bench obs generator: the appendix columns', () => {
  const stations = obs.stationTable();
  const rows = [0, 1, 9_999, 10_000, 123_457, 239_999];
  const b = obs.fillBatch(obs.batchBuffers(240_000), stations, 0, 240_000);

  it('mod64 and u(x) agree with BigInt arithmetic', () => {
    for (const x of [0n, 7n, 1n << 63n, M64]) {
      const h = splitmix64Ref(x);
      obs.splitmix64(Number(x >> 32n), Number(x & 0xffffffffn));
      for (const m of [100, 200, 4000, 5000]) expect(obs.mod64(obs.mixed.hi, obs.mixed.lo, m)).toBe(Number(h % BigInt(m)));
      expect(obs.unitOf(obs.mixed.hi, obs.mixed.lo)).toBe(Number(h) / 2 ** 64);
    }
  });

  it('country codes run AA .. HR', () => {
    expect(obs.countryCode(0)).toBe('AA');
    expect(obs.countryCode(27)).toBe('BB');
    expect(obs.countryCode(199)).toBe('HR');
  });

  it('each row follows the formulas (BigInt reference)', () => {
    for (const i of rows) {
      const s = i % 10_000, hour = Math.floor(i / 10_000);
      const hs = splitmix64Ref(BigInt(s)), hi = splitmix64Ref(BigInt(i));
      expect(b.ts[i]).toBe(1_577_836_800_000_000n + BigInt(hour) * 3_600_000_000n);
      expect(b.station_id[i]).toBe(s);
      const u = Number(hs) / 2 ** 64;
      const cidx = Math.floor(200 * (u * u));
      const country = String.fromCharCode(65 + Math.floor(cidx / 26), 65 + (cidx % 26));
      expect(b.country[i]).toBe(country);
      expect(b.station_name[i]).toBe(`ST-${String(s).padStart(5, '0')}-${country}`);
      expect(b.elevation_m[i]).toBe(Number(hs % 4000n));
      const present = splitmix64Ref(7n * BigInt(i)) % 200n !== 0n;
      expect(b.valid.temp_c[i]).toBe(present ? 1 : 0);
      const exact = 15 + 10 * Math.sin((2 * Math.PI * hour) / 24) + Number(hs % 200n) / 10 - 10 + (Number(hi % 100n) - 50) / 10;
      if (present) expect(Math.abs(b.temp_c[i] - exact)).toBeLessThanOrEqual(0.05 + 1e-9);
      expect(b.pressure_pa[i]).toBe(98000 + Number(splitmix64Ref(3n * BigInt(i)) % 5000n));
      expect(b.qc_ok[i]).toBe(splitmix64Ref(11n * BigInt(i)) % 100n !== 0n ? 1 : 0);
      expect(b.event_id[i]).toBe(`E${hi.toString(16).padStart(16, '0')}`);
    }
  });

  it('temp_c is whole tenths with about 0.5 % nulls', () => {
    let nulls = 0, offTenths = 0;
    for (let i = 0; i < 240_000; i++) {
      if (!b.valid.temp_c[i]) { nulls++; continue; }
      if (Math.abs(b.temp_c[i] * 10 - Math.round(b.temp_c[i] * 10)) > 1e-9) offTenths++;
    }
    expect(offTenths).toBe(0);
    expect(nulls / 240_000).toBeGreaterThan(0.004);
    expect(nulls / 240_000).toBeLessThan(0.006);
  });
});
