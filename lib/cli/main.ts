// The `tet` command line. Each subcommand lives in its own module and uses the public SDK
// exactly as a user would; this file only wires them together.
import { Command } from 'commander';
import { registerInfoCommands } from './info';
import { registerQueryCommands } from './query';
import { registerConvertCommands } from './convert';
import { endQuietlyOnClosedPipe, runCli } from './run';

const program = new Command('tet')
  .description('tetration: chunked N-D tensor files (.tet) and out-of-core queries')
  .version(require('../../package.json').version);

registerInfoCommands(program);    // info, verify, repair
registerQueryCommands(program);   // query, qhist
registerConvertCommands(program); // convert, export

endQuietlyOnClosedPipe(process.stdout);
endQuietlyOnClosedPipe(process.stderr);
void runCli(program, process.argv);
