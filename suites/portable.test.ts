import { readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleName, SHIPPED_BUNDLES } from "./environment.ts";

/**
 * Issue 19: a bundle is portable. bundle.json and the records name no folder of the machine that recorded them
 * (paths are relative to the bundle, or under `$LAB_CACHE` by name), and no recorded command names one either.
 */
const ROOT = join(import.meta.dirname, "bundles");
const BUNDLES = SHIPPED_BUNDLES.map(bundleName);

function strings(x: unknown, out: string[] = []): string[] {
  if (typeof x === "string") out.push(x);
  else if (Array.isArray(x)) for (const y of x) strings(y, out);
  else if (x && typeof x === "object")
    for (const [k, v] of Object.entries(x)) {
      out.push(k);
      strings(v, out);
    }
  return out;
}

/** Folders of a machine running the suite (the recording one's were /work/main, /root/.cache, …); /tmp and /proc are the cluster's too. */
const LOCAL = [/^\/(root|home|Users|work)\//, new RegExp(`^${homedir()}/`), new RegExp(`^${resolve(".")}/`)];

describe.each(BUNDLES)("bundle %s is portable", (name) => {
  const dir = join(ROOT, ...name.split("/"));
  it("bundle.json and records/*.json hold no absolute path", () => {
    const files = [
      join(dir, "bundle.json"),
      ...readdirSync(join(dir, "records"))
        .filter((f) => f.endsWith(".json"))
        .map((f) => join(dir, "records", f)),
    ];
    const absolute = files.flatMap((f) =>
      // a path, not a pattern an expectation is written as (`/^Disabled(/|$)/`, kept in the upgrade record's
      // nested verdicts)
      strings(JSON.parse(readFileSync(f, "utf8"))).filter((s) => s.startsWith("/") && !/^\/\^.*\/$/.test(s)),
    );
    expect(absolute).toEqual([]);
  });

  it("no recorded command names a folder of the recording machine", () => {
    const words = readdirSync(join(dir, "calls")).flatMap((f) =>
      readFileSync(join(dir, "calls", f), "utf8")
        .split("\n")
        .filter(Boolean)
        .flatMap((l) => (JSON.parse(l) as { argv: string[] }).argv),
    );
    expect(words.filter((w) => LOCAL.some((re) => re.test(w)))).toEqual([]);
  });

  it("no call's recorded stderr names one (the upgrade's nested run printed its checkout)", () => {
    const named = readdirSync(join(dir, "calls")).flatMap((f) =>
      readFileSync(join(dir, "calls", f), "utf8")
        .split("\n")
        .filter(Boolean)
        .flatMap(
          (l) => (JSON.parse(l) as { stderr?: string }).stderr?.replaceAll("\u001b", " ").split(/\s+/) ?? [],
        )
        .filter((w) => LOCAL.some((re) => re.test(w.replace(/^\[\d+m/, "")))),
    );
    expect(named).toEqual([]);
  });
});
