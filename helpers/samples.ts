import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { stripTranscript } from "./parse/transcript.ts";

/** `../shared` beside the checkout: real outputs captured from real clusters (never copied into the repo). */
export const SHARED_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "shared");
export const SAMPLES_DIR = join(SHARED_DIR, "samples");
export const SEEDS_DIR = join(SHARED_DIR, "seeds");

export const samplesAvailable = existsSync(SAMPLES_DIR);
export const SAMPLES_SKIP_REASON = `real captured samples not found at ${SAMPLES_DIR} (../shared is absent)`;

export interface Sample {
  name: string;
  /** The first line: where the output came from and which version. */
  provenance: string;
  raw: string;
  /** The output with transcript artefacts removed, ready for a parser. */
  output: string;
}

/** All samples captured for one command (`samples/<command>/*`), sorted by file name. */
export function samplesFor(command: string): Sample[] {
  const dir = join(SAMPLES_DIR, command);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .map((name) => {
      const raw = readFileSync(join(dir, name), "utf8");
      return { name, provenance: raw.split("\n")[0] ?? "", raw, output: stripTranscript(raw) };
    });
}

export function sample(command: string, file: string): Sample {
  const s = samplesFor(command).find((x) => x.name.startsWith(file));
  if (!s) throw new Error(`sample ${command}/${file}* not found under ${SAMPLES_DIR}`);
  return s;
}
