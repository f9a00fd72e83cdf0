// The native engine alone, for bench/fresh.mjs: what a fresh process's first answer costs when the
// SDK's JavaScript costs nothing. A diagnostic row beside `tetration` (not a contender for the
// goals): it shows how much of tetration's in-process time is the addon (open, the hand-off to a job
// thread, the engine, the answer back) and how much is the SDK (validation, planning, shaping).
//
//   node tet_floor.mjs capture TET_FILE DOC_JSON PLAN_FILE
//       runs DOC_JSON through the SDK once and saves the compiled plan it hands to the addon's
//       `execute` (untimed; bench/fresh.mjs does it once per op, in a process of its own)
//   node tet_floor.mjs run TET_FILE PLAN_FILE
//       loads the SDK (untimed, as tet_fresh.mjs does), then times the addon's own calls:
//       openFileResident (openFile when the catalog is not resident) → execute(plan) → result.
//       Prints one JSON line: in_process_ms, open_ms, engine_ms, the answer (values[0] of a scalar
//       mean or sum; [min, max] of `reductions`), this process's CPU time.
//
// The addon is taken from the SDK's own load (a process.dlopen hook keeps its exports): the same
// file, loaded the same way, as tetration's row uses.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const [mode, file, a3, a4] = process.argv.slice(2);

let addon;
const dlopen = process.dlopen;
process.dlopen = function hooked(mod, filename, ...rest) {
  const r = dlopen.call(this, mod, filename, ...rest);
  if (/tetration\.node$/.test(filename)) addon = mod.exports;
  return r;
};
const sdk = createRequire(import.meta.url)(path.join(ROOT, 'dist', 'index.cjs'));
if (!addon) throw new Error('tet_floor: the SDK did not load the addon through process.dlopen');

if (mode === 'capture') {
  const [docJson, planFile] = [a3, a4];
  const execute = addon.execute;
  let plan;
  addon.execute = function capture(handle, bytes, ...rest) {
    plan ??= Buffer.from(bytes);
    return execute.call(this, handle, bytes, ...rest);
  };
  const f = await sdk.open(file);
  await f.query(JSON.parse(docJson), { preview: 0 });
  if (!plan) throw new Error('tet_floor: the query did not call execute');
  fs.writeFileSync(planFile, plan);
} else if (mode === 'run') {
  const plan = new Uint8Array(fs.readFileSync(a3));
  const t1 = performance.now();
  const handle = addon.openFileResident(file, true) ?? await addon.openFile(file, true);
  const t2 = performance.now();
  const r = await addon.execute(handle, plan, null);
  const t3 = performance.now();
  const v = r.values;
  const answer = r.moreValues?.length ? [Number(v[0]), Number(r.moreValues[0][0])] : Number(v[0]);
  const cpu = process.cpuUsage();
  process.stdout.write(JSON.stringify({
    in_process_ms: t3 - t1, open_ms: t2 - t1, engine_ms: r.stats.seconds * 1000, threads: r.stats.threadsUsed,
    answer, cpu_ms: (cpu.user + cpu.system) / 1000,
  }) + '\n');
} else {
  process.stderr.write('usage: node tet_floor.mjs capture TET_FILE DOC_JSON PLAN_FILE | run TET_FILE PLAN_FILE\n');
  process.exit(2);
}
