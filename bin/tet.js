#!/usr/bin/env node
'use strict';
// The code cache first, so that commander and the SDK are compiled through it (bin/compile-cache.js).
require('./compile-cache').enable();
require('../dist/cli.cjs');
