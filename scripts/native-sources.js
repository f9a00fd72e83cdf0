// Lists the C/C++ sources of the native core for binding.gyp (gyp has no globbing).
// Core folders are plain C++17; napi/ is the Node binding; vendor/zstd is upstream C.
'use strict';
const fs = require('fs');
const path = require('path');
const root = path.join(__dirname, '..', 'native');
const CORE = ['util', 'format', 'codec', 'plan', 'fold', 'exec', 'write', 'verify', 'cells', 'query', 'napi'];
const ZSTD = ['common', 'compress', 'decompress'];

function list(dir, exts) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return list(p, exts);
    return exts.some((x) => e.name.endsWith(x)) ? [p] : [];
  });
}

const which = process.argv[2] || 'core';
const files = which === 'zstd'
  ? ZSTD.flatMap((d) => list(path.join(root, 'vendor', 'zstd', 'lib', d), ['.c', process.platform === 'win32' ? '.none' : '.S']))
  : CORE.flatMap((d) => list(path.join(root, d), ['.cpp']));
process.stdout.write(files.map((f) => path.relative(path.join(__dirname, '..'), f).split(path.sep).join('/')).sort().join(' '));
