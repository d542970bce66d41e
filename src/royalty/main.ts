// `royalty`, the command-line client: a thin client over HTTP built on the typed client library
// (src/client), with commander for its commands. bin/royalty.mjs runs the compiled form of this
// file (dist/src/royalty/main.js); it needs nothing of the server at run time.
import { Command } from 'commander';
import { authCommands } from './authCommands.ts';
import { completionScript } from './completion.ts';
import { dailyCommands } from './dailyCommands.ts';
import { genericCommands } from './genericCommands.ts';
import { describeFailure, EXIT_OK } from './output.ts';

export function buildProgram(): Command {
  const program = new Command('royalty')
    .description(
      'Command-line client of the royalty service: statements, analytics, exports and every procedure',
    )
    .option('--url <url>', "the server (default: ROYALTY_URL, else the profile's)")
    .option(
      '--profile <name>',
      'the stored login to use (default: ROYALTY_PROFILE, else "default")',
    )
    .option(
      '--org <id>',
      'the organization (default: ROYALTY_ORGANIZATION_ID, else the one chosen at login)',
    )
    .option('--json', 'print the exact JSON of the answer')
    .option('--csv', 'print lists as CSV')
    .showHelpAfterError()
    // usage errors throw (exit code 2) instead of exiting; subcommands inherit this when added after
    .exitOverride()
    .addHelpText(
      'after',
      '\nCredentials: ROYALTY_API_KEY with ROYALTY_ORGANIZATION_ID, else the stored login (royalty login).\n' +
        'Exit codes: 0 ok, 1 server or network failure, 2 usage or validation error.',
    );
  authCommands(program);
  genericCommands(program);
  dailyCommands(program);
  program
    .command('completion')
    .argument('<shell>', 'bash, zsh or fish')
    .description('print a shell completion script (bash: eval "$(royalty completion bash)")')
    .action((shell: string) => {
      process.stdout.write(completionScript(program, shell));
    });
  return program;
}

/** Runs the command line; the exit code. */
export async function main(argv: string[] = process.argv): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
  } catch (error) {
    const { code, message } = describeFailure(error);
    if (message) process.stderr.write(`royalty: ${message}\n`);
    return code;
  }
}
