#!/usr/bin/env node
'use strict';
// The code cache first, so that the CLI bundle and the SDK's loader are compiled through it
// (lib/loader/compile-cache.ts); a broken cache module only costs the cache.
let cache;
try {
  cache = require('../dist/compile-cache.cjs');
  cache.enable();
} catch {
  cache = undefined;  // compiled by Node as usual
}
const cli = require('node:path').join(__dirname, '..', 'dist', 'cli.cjs');
if (cache) cache.loadBundle(cli, module);
else require(cli);
