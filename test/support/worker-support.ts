// Test support: run an inline worker script against the built addon. The worker receives
// `workerData` plus `root` (package root) and `nodeGypBuild` (its resolved path) so it can load
// the binding without a TS loader; with `terminateEarly` the worker is terminated right after
// its first message (mid-work), which is what the crash/leak tests exercise.
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../../lib/binding';

export function runEvalWorker(script: string, data: Record<string, unknown>, terminateEarly = false): Promise<unknown> {
  const root = packageRoot();
  const workerData = { ...data, terminateEarly, root, nodeGypBuild: require.resolve('node-gyp-build', { paths: [root] }) };
  return new Promise((resolve, reject) => {
    const w = new Worker(script, { eval: true, workerData });
    w.once('message', async (msg) => {
      if (terminateEarly) await w.terminate();
      resolve(msg);
    });
    w.once('error', reject);
  });
}

/** Polls `pred` every millisecond or two until it holds or `ms` have passed; its last value. */
export async function until(pred: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 2));
  }
  return pred();
}
