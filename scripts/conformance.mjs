// Runs the shared conformance suite (../shared/conformance) against bin/tet.js when the
// folder exists beside the checkout; a regression fails `npm test`.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runner = path.resolve(root, '..', 'shared', 'conformance', 'runner', 'check_project.py');
if (!existsSync(runner)) {
  console.log(`conformance: skipped (${runner} not found)`);
  process.exit(0);
}
const r = spawnSync('python3', [runner, '--project', root, '-j', '4'], { stdio: 'inherit' });
process.exit(r.status ?? 1);
