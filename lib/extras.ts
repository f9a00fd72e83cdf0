// What only some programs call: conversion from other formats, export to Zarr, pictures of results
// and notebook display. lib/index.ts exports it from here; in the CommonJS build it is the SDK part
// `extras` (lib/loader/parts.ts), loaded on its first call, so `require('tetration')`, a query and
// `tet info` do not read or compile it.
export { display, toHTML } from './notebook';
export { renderPlot, plotSpec } from './plot';
export { convert, detectSource } from './convert';
export { exportZarr } from './export';
