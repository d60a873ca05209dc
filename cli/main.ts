import { UserError } from "../helpers/errors.ts";
import { ownLines } from "../helpers/output.ts";
import { commandUsage, parseCommandArgs, wantsHelp } from "./args.ts";
import { ALL_COMMANDS } from "./commands.ts";
import { type Io, processIo, withStreams } from "./io.ts";
import { printErr, printError, printOut } from "./print.ts";
import { COMMANDS, type Command, registerCommand, usage } from "./registry.ts";
import { versionText } from "./version.ts";

export type { Io } from "./io.ts";

for (const c of ALL_COMMANDS) registerCommand(c);

/** One command (or subcommand) at `path` (`check`, `lab run`): its --help, its arguments, its run. */
async function runCommand(cmd: Command, path: string, argv: string[], io: Io): Promise<number> {
  try {
    if (cmd.subcommands) {
      const [sub, ...rest] = argv;
      const names = cmd.subcommands.map((s) => s.name);
      if (sub === undefined || sub.startsWith("-")) {
        if (wantsHelp(argv)) {
          printOut(io, ownLines(commandUsage(cmd, path)));
          return 0;
        }
        throw new UserError(`which one? valid: ${names.join(", ")} (${path} --help)`);
      }
      const s = cmd.subcommands.find((x) => x.name === sub);
      if (!s) throw new UserError(`unknown subcommand ${JSON.stringify(sub)}; valid: ${names.join(", ")}`);
      return await runCommand(s, `${path} ${sub}`, rest, io);
    }
    if (wantsHelp(argv)) {
      printOut(io, ownLines(commandUsage(cmd, path)));
      return 0;
    }
    if (!cmd.run) throw new Error(`command ${path} has nothing to run`);
    return await cmd.run(parseCommandArgs(cmd, argv), withStreams(io));
  } catch (err) {
    if (err instanceof UserError) {
      printError(io, path, err.message);
      return err.exitCode;
    }
    throw err;
  }
}

/** Runs one CLI invocation; user errors print one line and return their exit code (2 by default). */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    printErr(io, ownLines(usage()));
    return 2;
  }
  if (name === "help" || name === "--help" || name === "-h") {
    const cmd = rest[0] === undefined ? undefined : COMMANDS.get(rest[0]);
    printOut(io, ownLines(cmd ? commandUsage(cmd, cmd.name) : usage()));
    return 0;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    printOut(io, ownLines(versionText()));
    return 0;
  }
  try {
    const cmd = COMMANDS.get(name);
    if (!cmd) {
      printError(
        io,
        null,
        `unknown command ${JSON.stringify(name)}; valid: ${[...COMMANDS.keys()].join(", ")} (--help lists them)`,
      );
      return 2;
    }
    return await runCommand(cmd, name, rest, io);
  } catch (err) {
    // the reader closed the pipe (`… | head`): the output ends there
    if ((err as NodeJS.ErrnoException).code === "EPIPE") return 0;
    throw err;
  }
}
