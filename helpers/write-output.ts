/**
 * Where `report` and `summary` write: to a temporary file beside the target, then renamed onto it, so a reader
 * never sees half a page and a failed write leaves the old file as it was. Never onto a folder, and never into
 * one of the bundles the output was made from (a report written over its own bundle.json destroyed its input).
 */
import { mkdirSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { bundleRoot, isUnder } from "./bundle/files.ts";
import { UserError } from "./errors.ts";

/** `path` with its existing part resolved (links included), the rest as named: where a write would land. */
function landing(path: string): string {
  const abs = resolve(path);
  const rest: string[] = [];
  let at = abs;
  for (;;) {
    try {
      return join(realpathSync(at), ...rest);
    } catch {
      const up = dirname(at);
      if (up === at) return abs;
      rest.unshift(basename(at));
      at = up;
    }
  }
}

/**
 * Writes `content` to `out` (its folder made if missing) through a temporary file and a rename. Refused with
 * one line: `out` is a folder, or `out` is (or is inside) one of `inputs` (bundle folders).
 */
export function writeOutput(out: string, content: string, inputs: string[], option = "-o"): void {
  checkOutputPath(out, inputs, option);
  const folder = dirname(resolve(out));
  const tmp = join(folder, `.${basename(out)}.${process.pid}.${Date.now().toString(36)}.tmp`);
  try {
    mkdirSync(folder, { recursive: true });
    writeFileSync(tmp, content, { flag: "wx" });
    // a link named as the output is replaced by the file, not written through: rename replaces the entry
    renameSync(tmp, resolve(out));
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new UserError(
      `cannot write ${out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

/** Refuses, with one line, an output path that is a folder or lands in one of the `inputs` (checked before any work too). */
export function checkOutputPath(out: string, inputs: string[], option = "-o"): void {
  if (out === "") throw new UserError(`${option} needs a file name`);
  let st: ReturnType<typeof statSync> | undefined;
  try {
    st = statSync(out);
  } catch {
    st = undefined;
  }
  if (st?.isDirectory())
    throw new UserError(`${option} ${out} is a folder; name a file (e.g. ${join(out, "report.html")})`);
  if (st && !st.isFile()) throw new UserError(`${option} ${out} is not a regular file`);
  const target = landing(out);
  for (const dir of inputs) {
    const root = bundleRoot(dir);
    if (isUnder(root, target))
      throw new UserError(
        `${option} ${out} is inside the bundle ${dir}, one of the inputs: write the output outside it`,
      );
  }
}
