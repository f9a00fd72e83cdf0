// The `tet` command line. Each subcommand lives in its own module and uses the public SDK
// exactly as a user would; this file only wires them together.
import { Command } from 'commander';
import { version } from '../../package.json';  // the field alone is bundled, not the whole file
import { registerCommands } from './commands';
import { exitWhenSettled, mayBeTerminal, quietOnClosedPipes, writeErr, writeOut } from './out';
import { runCli } from './run';

// Output through lib/cli/out.ts (fds 1 and 2, no streams at start-up); the subcommands inherit it.
// The help's width and colours come from the streams only where they may be terminals: the
// help has no styling, so elsewhere it is plain text at commander's default width.
const program = new Command('tet');
const streams = program.configureOutput();  // commander's own answers, which create the streams
program.configureOutput({
  writeOut,
  writeErr,
  getOutHelpWidth: () => (mayBeTerminal(1) ? streams.getOutHelpWidth?.() : undefined) ?? 80,  // commander's default
  getErrHelpWidth: () => (mayBeTerminal(2) ? streams.getErrHelpWidth?.() : undefined) ?? 80,
  getOutHasColors: () => (mayBeTerminal(1) ? streams.getOutHasColors?.() ?? false : false),
  getErrHasColors: () => (mayBeTerminal(2) ? streams.getErrHasColors?.() ?? false : false),
});
program
  .description('tetration: chunked N-D tensor files (.tet) and out-of-core queries')
  .version(version);

registerCommands(program, process.argv);  // info, verify, repair, query, merge, qhist, convert, export

quietOnClosedPipes();
void runCli(program, process.argv).then(exitWhenSettled);
