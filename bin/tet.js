#!/usr/bin/env node
'use strict';
// The code cache first, so that the CLI bundle and the SDK's loader are compiled through it
// (lib/loader/compile-cache.ts); a broken cache module only costs the cache.
try {
  require('../dist/compile-cache.cjs').enable();
} catch {
  // compiled by Node as usual
}
require('../dist/cli.cjs');
