/**
 * The CLI run in this process, for tests: `main(argv)` with an io that keeps what it printed, stdin given, as
 * `datapath-conformance ARGV…` would run it (the CLI's own tests, each of which had a copy of this).
 */
import { main } from "./main.ts";

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

export async function runCli(argv: string[], stdin = ""): Promise<CliRun> {
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
  };
  const code = await main(argv, io);
  return { code, out, err };
}
