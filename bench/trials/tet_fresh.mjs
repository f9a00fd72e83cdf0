// tetration contender for bench/fresh.mjs: one query in a fresh process. Prints one JSON line:
// require_ms (loading the SDK and the addon), open_ms, query_ms (first query, end to end),
// in_process_ms = open → result, engine_ms (the response's execution.seconds), whether the first scan
// read by pread (execution.read_by_pread), the answer and
// this process's CPU time (for the contention check).
// usage: node tet_fresh.mjs TET_FILE DOC_JSON
const t0 = performance.now();
const { createRequire } = await import('node:module');
const path = await import('node:path');
const { fileURLToPath } = await import('node:url');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { open } = createRequire(import.meta.url)(path.join(ROOT, 'dist', 'index.cjs'));
const t1 = performance.now();
const [file, docJson] = process.argv.slice(2);
const f = await open(file);
const t2 = performance.now();
const res = await f.query(JSON.parse(docJson), { preview: 0 });
const t3 = performance.now();
const ex = res.execution;
const answer = ex.operation === 'reductions' ? [Number(ex.operation_min), Number(ex.operation_max)] : Number(ex.operation_mean ?? ex.operation_sum);
const cpu = process.cpuUsage();
process.stdout.write(JSON.stringify({
  require_ms: t1 - t0, open_ms: t2 - t1, query_ms: t3 - t2, in_process_ms: t3 - t1, engine_ms: ex.seconds * 1000,
  threads: ex.threads, io_mode: ex.io_mode, read_by_pread: ex.read_by_pread === true, answer, cpu_ms: (cpu.user + cpu.system) / 1000,
}) + '\n');
