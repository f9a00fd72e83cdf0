// `npm pack` / `npm publish` (prepack): the package always ships dist/ and the prebuilt addon
// for this platform, so `npm install tetration` needs no compiler. Builds dist/ (build:ts) and,
// when prebuilds/<platform>-<arch>/ holds no addon or one older than a native source, the
// prebuild (prebuildify: N-API, stripped). Fails when no prebuild results.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = (args) => execFileSync(npm, args, { cwd: root, stdio: 'inherit' });

function newest(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return readdirSync(path).reduce((m, n) => (n === 'tests' || n === 'fuzz' ? m : Math.max(m, newest(join(path, n)))), 0);
}

function prebuild(dir) {
  if (!existsSync(dir)) return null;
  const f = readdirSync(dir).find((n) => n.endsWith('.node'));
  return f ? join(dir, f) : null;
}

run(['run', 'build:ts']);
const dir = join(root, 'prebuilds', `${process.platform}-${process.arch}`);
const sources = Math.max(newest(join(root, 'native')), newest(join(root, 'binding.gyp')),
  newest(join(root, 'scripts', 'native-sources.js')));
const have = prebuild(dir);
if (!have || statSync(have).mtimeMs < sources) run(['run', 'build:prebuilds']);
else console.log(`prepack: ${have} is newer than the native sources; kept`);
const made = prebuild(dir);
if (!made) {
  console.error(`prepack: no prebuilt addon in ${dir}: the package would need a compiler to install`);
  process.exit(1);
}
console.log(`prepack: ships ${made} (${statSync(made).size} bytes)`);
