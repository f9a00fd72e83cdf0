'use strict';
// string-width for the CLI's bundled table and bar packages (cli-table3, cli-progress), with the
// answer for the text a `tet` table holds taken without string-width's regular expressions.
// string-width runs an ANSI regex and the ~10 KB emoji regex over every string it measures, and
// cli-table3 measures each cell and each drawn line many times: compiling and running those was
// ~2 of the ~3.5 ms `tet info` spent drawing its one-row table (docs/performance.md "CLI
// start-up"). Each character of NARROW has width 1 to string-width (checked for every code
// point of the class: test/unit/cli-string-width.test.ts), and no sequence of them is an emoji
// or an escape, so a string of them is as wide as it is long; any other text is measured by
// string-width itself. tsup.config.ts resolves the packages' `require('string-width')` here.
// CommonJS, not TypeScript: the packages require it and call what it exports.
const stringWidthFull = require('string-width');

// Printable ASCII, Latin-1 and Latin Extended (no C1 controls), general punctuation up to the
// ellipsis (no zero-width joiners or marks), box drawing (cli-table3's borders).
const NARROW = /^[\x20-\x7e\xa0-\u02ff\u2010-\u2027\u2500-\u257f]*$/;

function stringWidth(text) {
  return typeof text === 'string' && NARROW.test(text) ? text.length : stringWidthFull(text);
}
stringWidth.default = stringWidth;  // string-width's own second export

module.exports = stringWidth;
