import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** The first executable `bin` on `path` (PATH by default), or null: what `command -v` answers. */
export function which(bin: string, path = process.env.PATH ?? ""): string | null {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, bin);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
