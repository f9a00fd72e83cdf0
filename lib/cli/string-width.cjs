'use strict';
// string-width for the CLI (lib/cli/box-table.ts and the bundled cli-progress), with the answer
// for the text a `tet` table holds taken without string-width's regular expressions. string-width
// runs an ANSI regex and the ~10 KB emoji regex over every string it measures: compiling and
// running those was ~2 of the ~3.5 ms `tet info` once spent drawing its one-row table
// (docs/performance.md "CLI start-up"). Each character of NARROW has width 1 to string-width
// (checked for every code point of the class: test/unit/cli-string-width.test.ts), and no
// sequence of them is an emoji or an escape, so a string of them is as wide as it is long; any
// other text is measured by string-width itself. tsup.config.ts resolves `string-width` here in
// the CLI's bundle. CommonJS, not TypeScript: packages require it and call what it exports.
const stringWidthFull = require('string-width');

// Printable ASCII, Latin-1 and Latin Extended (no C1 controls), general punctuation up to the
// ellipsis (no zero-width joiners or marks), box drawing (the tables' borders).
const NARROW = /^[\x20-\x7e\xa0-\u02ff\u2010-\u2027\u2500-\u257f]*$/;

function stringWidth(text) {
  return typeof text === 'string' && NARROW.test(text) ? text.length : stringWidthFull(text);
}
stringWidth.default = stringWidth;  // string-width's own second export

module.exports = stringWidth;
