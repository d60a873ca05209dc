/** Where a CLI invocation reads and writes: the process's streams, or a test's strings. */
export interface Io {
  out(s: string): void;
  err(s: string): void;
  readStdin(): Promise<string>;
  /** Streamed output: resolves when the sink has taken it (backpressure). Defaults to `out`. */
  write?(s: string | Uint8Array): Promise<void>;
  /** Standard input as a stream of chunks (`parse --ndjson -`). */
  stdin?(): AsyncIterable<Buffer | string>;
  /**
   * Running as a GitHub Actions step (GITHUB_ACTIONS=true): `check` and `upgrade` add annotations, and a refused
   * bundle is one too (cli/print.ts). A test's Io leaves it out.
   */
  githubActions?: boolean;
  /** The environment a command reads (`plan`, `run`): the process's, or a test's. */
  env?: NodeJS.ProcessEnv;
}

/** An Io with the streamed parts filled in from the plain ones (tests pass only out/err/readStdin). */
export function withStreams(io: Io): Required<Io> {
  return {
    ...io,
    githubActions: io.githubActions ?? false,
    env: io.env ?? process.env,
    write: io.write ?? (async (s) => io.out(typeof s === "string" ? s : Buffer.from(s).toString("utf8"))),
    stdin:
      io.stdin ??
      async function* () {
        yield await io.readStdin();
      },
  };
}

/** The process's own streams: the only place the CLI writes to them (cli/print.ts decides what). */
export const processIo: Io = {
  githubActions: process.env.GITHUB_ACTIONS === "true",
  env: process.env,
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  },
  write: (s) =>
    new Promise<void>((resolve, reject) => {
      if (process.stdout.write(s)) return resolve();
      const done = (err?: Error) => {
        process.stdout.off("drain", done).off("error", done);
        if (err) reject(err);
        else resolve();
      };
      process.stdout.once("drain", done).once("error", done);
    }),
  stdin: () => process.stdin,
};
