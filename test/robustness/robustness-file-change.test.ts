// Files that change under an open handle: truncated (also in the middle of a query, while native
// threads read the mapping), grown, rewritten in place. Every case must end in a TetError
// (TET_IO_FILE_CHANGED) or, when the change came after the read finished, the right answer —
// never SIGBUS. The racing scenarios run in a child process so a fault there cannot take the
// test runner down; the child's exit status is part of the assertion.
import { SHARED } from '../support/paths';
import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { open, TetError } from '../../lib/index';
import { packageRoot } from '../../lib/binding';

const CONF = join(SHARED, 'conformance/fixtures');
const BIG = join(CONF, 'big_f32.tet');  // f32 [3000,1500], 96 raw tiles of [250,200], 18 MB
const dir = mkdtempSync(join(tmpdir(), 'tet-robust-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function expectChanged(p: Promise<unknown>): Promise<TetError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(TetError);
  expect((err as TetError).code).toBe('TET_IO_FILE_CHANGED');
  return err as TetError;
}

describe('file changed under an open handle (same process, between queries)', () => {
  it('truncated: read and query reject TET_IO_FILE_CHANGED, the handle stays usable for close', async () => {
    const p = join(dir, 'trunc.tet');
    copyFileSync(BIG, p);
    const f = await open(p);
    const before = await f.read('data', [{ start: 0, stop: 2 }, { start: 0, stop: 3 }]);
    expect(before.shape).toEqual([2, 3]);
    truncateSync(p, 4096);
    const e = await expectChanged(f.read('data'));
    expect(e.message).toMatch(/length was \d+ bytes, now 4096/);
    await expectChanged(f.query({ dataset: 'data', sum: [] }));
    f.close();
  });

  it('grown: rejects TET_IO_FILE_CHANGED', async () => {
    const p = join(dir, 'grow.tet');
    copyFileSync(join(CONF, 'f32_r2_edges.tet'), p);
    const f = await open(p);
    appendFileSync(p, Buffer.alloc(10));
    await expectChanged(f.read(f.datasets[0]!.name));
    f.close();
  });

  it('rewritten in place with the same length: rejects TET_IO_FILE_CHANGED (modification time)', async () => {
    const p = join(dir, 'rewrite.tet');
    copyFileSync(join(CONF, 'f32_r2_edges.tet'), p);
    const f = await open(p);
    const bytes = readFileSync(p);
    await new Promise((r) => setTimeout(r, 20));
    writeFileSync(p, bytes);  // O_TRUNC + write: same length, new mtime
    const e = await expectChanged(f.read(f.datasets[0]!.name));
    expect(e.message).toMatch(/modified while open/);
    f.close();
  });

  it('replaced by rename: the open handle keeps reading the old file (a snapshot, not an error)', async () => {
    const p = join(dir, 'rename.tet');
    copyFileSync(join(CONF, 'f32_r2_edges.tet'), p);
    const f = await open(p);
    const name = f.datasets[0]!.name;
    const want = Array.from((await f.read(name)).data as Float32Array);
    copyFileSync(join(CONF, 'one_to_six_f32.tet'), join(dir, 'other.tet'));
    const { renameSync } = await import('node:fs');
    renameSync(join(dir, 'other.tet'), p);
    expect(Array.from((await f.read(name)).data as Float32Array)).toEqual(want);
    f.close();
    const g = await open(p);  // a new open sees the new file
    expect(g.datasets[0]!.shape).toEqual([2, 3]);
    g.close();
  });
});

// Child: N rounds of { copy, open, start a full-tensor sum on the native pool, busy-wait a
// little, truncate to a few KiB, await }. Outcomes are tallied; anything but the right sum or
// TET_IO_FILE_CHANGED is reported as "bad". A SIGBUS would kill the child (signal != null).
const RACE_CHILD = `
const fs = require('node:fs');
const { root, nodeGypBuild, src, dir, rounds } = JSON.parse(process.argv[1]);
const b = require(nodeGypBuild)(root);
function sumPlan(rows, cols, op, strategy) {
  const buf = new Uint8Array(288), v = new DataView(buf.buffer);
  v.setUint32(0, 0x4e4c5054, true); v.setUint32(4, 1, true); v.setUint32(8, 0, true); v.setUint32(12, 2, true);
  v.setUint32(16, op, true); v.setUint32(20, 3, true); v.setUint32(24, 8, true); v.setFloat64(32, 0.5, true);
  v.setUint32(68, strategy, true);
  for (let a = 0; a < 8; a++) {
    v.setBigUint64(88 + 8 * a, 0n, true); v.setBigUint64(152 + 8 * a, 1n, true);
    v.setBigUint64(216 + 8 * a, BigInt(a === 0 ? rows : a === 1 ? cols : 1), true);
  }
  return buf;
}
(async () => {
  const plans = [sumPlan(3000, 1500, 1, 0), sumPlan(3000, 1500, 23, 1)];  // sum (streaming), histogram (materialized)
  const want = [];
  { const f = b.openFileSync(src, true);
    for (const p of plans) want.push(Array.from((await b.execute(f, p, null)).values).join(','));
    b.closeFile(f); }
  const tally = { ok: 0, changedBefore: 0, vanished: 0, changedAfter: 0, bad: [] };
  for (let i = 0; i < rounds; i++) {
    const p = dir + '/race-' + i + '.tet';
    fs.copyFileSync(src, p);
    const f = b.openFileSync(p, true);
    const k = i % plans.length;
    const pending = b.execute(f, plans[k], null);
    const spinUntil = process.hrtime.bigint() + BigInt((i * 137) % 4000) * 1000n;
    while (process.hrtime.bigint() < spinUntil) {}
    fs.truncateSync(p, 8192);
    try {
      const r = await pending;
      if (Array.from(r.values).join(',') === want[k]) tally.ok++; else tally.bad.push('wrong result ' + i);
    } catch (e) {
      if (e.code !== 'TET_IO_FILE_CHANGED') tally.bad.push(e.code + ': ' + e.message);
      else if (/vanished/.test(e.message)) tally.vanished++;
      else if (/length was/.test(e.message)) tally.changedBefore++;
      else tally.changedAfter++;
    }
    try { await b.execute(f, plans[0], null); tally.bad.push('query after truncation resolved'); }
    catch (e) { if (e.code !== 'TET_IO_FILE_CHANGED') tally.bad.push('after: ' + e.code); }
    b.closeFile(f);
    fs.unlinkSync(p);
  }
  process.stdout.write(JSON.stringify(tally));
})().catch((e) => { process.stdout.write(JSON.stringify({ crash: String(e && e.stack || e) })); process.exitCode = 3; });
`;

describe('truncated while native threads read the mapping (child process)', () => {
  it('never faults: every round ends with the right sum or TET_IO_FILE_CHANGED', () => {
    const root = packageRoot();
    const args = { root, nodeGypBuild: require.resolve('node-gyp-build', { paths: [root] }), src: BIG, dir, rounds: 40 };
    const child = spawnSync(process.execPath, ['-e', RACE_CHILD, JSON.stringify(args)], { encoding: 'utf8', timeout: 120_000 });
    expect(child.signal, child.stderr).toBeNull();
    expect(child.status, child.stderr).toBe(0);
    const tally = JSON.parse(child.stdout) as { ok: number; changedBefore: number; vanished: number; changedAfter: number; bad: string[] };
    expect(tally.bad).toEqual([]);
    expect(tally.ok + tally.changedBefore + tally.vanished + tally.changedAfter).toBe(40);
    console.log('truncation race outcomes:', JSON.stringify(tally));
  }, 150_000);
});
