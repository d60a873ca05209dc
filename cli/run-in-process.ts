/**
 * The CLI run in this process, for tests: `main(argv)` with an io that keeps what it printed, stdin given, as
 * `datapath-conformance ARGV…` would run it (the CLI's own tests, each of which had a copy of this).
 */
import { RUN_INPUTS } from "../clusters/run-input-list.ts";
import { main } from "./main.ts";

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/**
 * This process's environment without the variables a cluster run reads (`plan` and `run` read them): a test's
 * CLI starts as a user's would with none of them set, whatever the test runner was started with (`.ci/run` sets
 * CLUSTER_PROVIDER=none).
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const i of RUN_INPUTS) if (i.env) delete env[i.env];
  return env;
}

export async function runCli(
  argv: string[],
  stdin = "",
  env: NodeJS.ProcessEnv = cleanEnv(),
): Promise<CliRun> {
  let out = "";
  let err = "";
  const io = {
    out: (s: string) => {
      out += s;
    },
    err: (s: string) => {
      err += s;
    },
    readStdin: async () => stdin,
    env,
  };
  const code = await main(argv, io);
  return { code, out, err };
}
