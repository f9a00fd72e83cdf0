// The last step of `npm run build:ts`: tsup writes the SDK's CommonJS bundle as dist/index.cjs and
// the loader (lib/loader/sdk-loader.ts) as dist/sdk-loader.cjs; this moves the bundle to
// dist/sdk.cjs (with its source map) and puts the loader in its place as dist/index.cjs, the
// bundle's content hash written into it (the code cache's key).
// dist/sdk.cjs is written already wrapped: one function expression taking CommonJS's five
// parameters and the loader's hooks (WRAP below; lib/loader/sdk-loader.ts calls it in that
// order), so the loader hands the file's text to V8 as it is read. Wrapping at load time made a
// 600 KB cons string that V8 flattened (copied) again before compiling: ~4 ms of a fresh
// process on a machine whose first touch of fresh memory is slow (docs/performance.md).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const at = (f) => path.join(DIST, f);

const bundle = fs.readFileSync(at('index.cjs'), 'utf8');
if (!bundle.includes('//# sourceMappingURL=index.cjs.map')) throw new Error('finish-dist: dist/index.cjs is not the tsup bundle (run tsup first)');
// The wrapper's head is a line of its own: the source map gains one empty line in front.
const WRAP = ['(function (exports, require, module, __filename, __dirname, __tetLoader) {\n', '\n});\n'];

/** Wraps the bundle text `text` (its map: `mapFile`) as dist/`name`; returns its content hash. */
function wrap(name, text, mapFile) {
  // ASCII only, so the loader reads it as latin1 (a copy; UTF-8 costs a decode and a two-byte
  // string): tsup's charset 'ascii' escapes non-ASCII code in strings, regexps and names; the
  // minified bundles keep no comments, but a stray character is escaped all the same.
  const ascii = text.replace(/[^\x00-\x7f]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
  const body = ascii.replace(`//# sourceMappingURL=${path.basename(mapFile)}`, `//# sourceMappingURL=${name}.map`);
  const out = WRAP[0] + body + WRAP[1];
  fs.writeFileSync(at(name), out);
  const map = JSON.parse(fs.readFileSync(mapFile, 'utf8'));
  map.file = name;
  map.mappings = `;${map.mappings}`;
  fs.writeFileSync(at(`${name}.map`), JSON.stringify(map));
  return crypto.createHash('sha256').update(out).digest('hex').slice(0, 20);
}

const hashes = [`sdk=${wrap('sdk.cjs', bundle, at('index.cjs.map'))}`];
fs.rmSync(at('index.cjs.map'));
// The SDK's parts (lib/loader/parts.ts: dist/sdk-part-<name>.cjs), each wrapped in place.
for (const f of fs.readdirSync(DIST).sort()) {
  const m = /^sdk-part-(\w+)\.cjs$/.exec(f);
  if (!m) continue;
  const text = fs.readFileSync(at(f), 'utf8');
  if (text.startsWith(WRAP[0])) throw new Error(`finish-dist: dist/${f} is wrapped already (run tsup first)`);
  hashes.push(`${m[1]}=${wrap(f, text, at(`${f}.map`))}`);
}
const hash = hashes[0].slice('sdk='.length);
const loader = fs.readFileSync(at('sdk-loader.cjs'), 'utf8');
if (!loader.includes('__TET_BUNDLE_HASHES__')) throw new Error('finish-dist: dist/sdk-loader.cjs has no hash placeholder');
fs.writeFileSync(at('index.cjs'), loader.replace('__TET_BUNDLE_HASHES__', hashes.join(';')));
fs.rmSync(at('sdk-loader.cjs'));
for (const f of ['sdk-loader.cjs.map']) fs.rmSync(at(f), { force: true });
// The files the CLI's code cache compiles without looking for an import() in them (a vm script's
// import() fails on Node 20): none may have one.
{
  const require = createRequire(import.meta.url);
  const { DYNAMIC_IMPORT, IMPORT_FREE } = require(at('compile-cache.cjs'));
  for (const f of IMPORT_FREE) {
    if (DYNAMIC_IMPORT.test(fs.readFileSync(at(f), 'latin1'))) throw new Error(`finish-dist: dist/${f} has an import(), which the CLI's code cache cannot run (lib/loader/compile-cache.ts IMPORT_FREE)`);
  }
  // bin/tet.js reads the CLI bundle as latin1 (compile-cache.ts loadBundle).
  if (/[^\x00-\x7f]/.test(fs.readFileSync(at('cli.cjs'), 'latin1'))) throw new Error('finish-dist: dist/cli.cjs is not ASCII (tsup.config.ts charset)');
}
console.log(`finish-dist: dist/sdk.cjs (${(fs.statSync(at('sdk.cjs')).size / 1024).toFixed(0)} KB, hash ${hash}) and ${hashes.length - 1} part(s) behind dist/index.cjs`);

// The packages bundled into dist/ (the CLI's commander, cli-table3, cli-progress and their
// dependencies: tsup.config.ts `noExternal`) ship their licence texts beside the bundles, found
// from the sources the bundles' source maps name (the bundles are minified: no comments).
const ROOT = path.join(DIST, '..');
const bundled = new Set();
for (const f of fs.readdirSync(DIST)) {
  if (!/\.(c|m)?js\.map$/.test(f)) continue;
  for (const src of JSON.parse(fs.readFileSync(at(f), 'utf8')).sources ?? []) {
    const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(src);
    if (m) bundled.add(m[1]);
  }
}
const notices = [];
for (const name of [...bundled].sort()) {
  const dir = path.join(ROOT, 'node_modules', name);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const licenceFile = fs.readdirSync(dir).find((f) => /^(licen[cs]e|copying)([-.][\w.-]*)?$/i.test(f));
  if (!licenceFile) throw new Error(`finish-dist: ${name} is bundled but has no LICENSE file to ship`);
  const text = fs.readFileSync(path.join(dir, licenceFile), 'utf8').trim();
  notices.push(`${name}@${pkg.version} (${pkg.license ?? 'see below'})\n${'-'.repeat(60)}\n${text}\n`);
}
const header = 'Third-party code bundled into the files of this folder, with the licence of each package.\n\n';
fs.writeFileSync(at('THIRD-PARTY-NOTICES.txt'), header + notices.join('\n'));
console.log(`finish-dist: dist/THIRD-PARTY-NOTICES.txt (${notices.length} bundled packages)`);
