// tetration SDK contender (warm): open the .tet once, fault the mapping in with untimed sums
// over the same selection, then time the query in-process (timeTrial in jsfold.mjs). With --rss, samples RssAnon from /proc/self/status every millisecond while
// the first query runs and reports the peak growth over the value just before it.
// usage: node tet_sdk.mjs TET_FILE CASE_JSON MIN_SECONDS MAX_REPS [--rss]
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { timeTrial, trialArgs } from './jsfold.mjs';
import { tetResult } from './tetresult.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { open } = createRequire(import.meta.url)(path.join(ROOT, 'dist', 'index.cjs'));
const { file, c, minSeconds, maxReps } = trialArgs();
const withRss = process.argv.includes('--rss');

const rssAnon = () => Number(/RssAnon:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;

const f = await open(file);
const engineSeconds = [];
let rss = null;
async function query() {
  const res = await f.query(c.doc, { preview: 0 });
  engineSeconds.push(res.execution.seconds);
  return tetResult(c, res);
}

if (withRss) {
  const before = rssAnon();
  let peak = before;
  const timer = setInterval(() => { const v = rssAnon(); if (v > peak) peak = v; }, 1);
  await query();
  clearInterval(timer);
  const after = rssAnon();
  rss = { before, peak: Math.max(peak, after), after, delta: Math.max(peak, after) - before };
}
const touchDoc = { dataset: c.doc.dataset, sum: [], ...(c.doc.selection ? { selection: c.doc.selection } : {}) };
// Twice: a dataset's first scan in a process may read by pread (execution.read_by_pread), which
// leaves the mapping as it was; the second reads through the mapping and faults it in.
const touch = async () => {
  await f.query(touchDoc, { preview: 0 });
  await f.query(touchDoc, { preview: 0 });
};
engineSeconds.length = 0;
await timeTrial(query, minSeconds, maxReps, { engineSeconds, rss }, touch);
