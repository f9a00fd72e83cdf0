// `npm pack` / `npm publish` (prepack): the package always ships dist/ and the prebuilt addon
// for this platform, so `npm install tetration` needs no compiler. Builds dist/ (build:ts) and,
// when prebuilds/<platform>-<arch>/ holds no addon or one older than a native source, the
// prebuild (prebuildify: N-API, stripped). Fails when no prebuild results.
import { execFileSync, spawnSync } from 'node:child_process';
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
// linux-arm64, cross-built with Debian's aarch64 toolchain where it is installed (scripts/arm64-test.sh).
if (process.platform === 'linux' && process.arch === 'x64') {
  const cross = spawnSync('sh', ['-c', 'command -v aarch64-linux-gnu-g++'], { stdio: 'ignore' }).status === 0;
  if (cross) {
    execFileSync('bash', [join(root, 'scripts', 'arm64-test.sh'), '--build-only'], { cwd: root, stdio: 'inherit' });
    console.log(`prepack: ships ${prebuild(join(root, 'prebuilds', 'linux-arm64'))}`);
  } else {
    console.log('prepack: no aarch64 cross toolchain (g++-aarch64-linux-gnu): linux-arm64 is not in this package');
  }
}
