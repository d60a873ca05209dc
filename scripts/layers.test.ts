/**
 * The house's layering, checked on every run: our modules import no cycle (type imports included), and no
 * import runs upward — helpers/ imports nothing of clusters/, suites/, cli/ or scripts/; clusters/ nothing of
 * suites/, cli/ or scripts/. (manifests/images.ts reads the lab's image names from clusters/lab.ts: data
 * beside the clusters, allowed by name.)
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
const DIRS = ["helpers", "clusters", "suites", "cli", "scripts", "manifests", "bin"];

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mts)$/.test(e.name) && !/\.test\.ts$/.test(e.name))
    .filter((e) => !join(e.parentPath, e.name).includes("node_modules"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** Relative imports and re-exports of a module, type-only ones included, as paths from the root. */
function importsOf(file: string, text: string): string[] {
  return [...text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"/gms)].map((m) =>
    normalize(join(dirname(file), m[1] as string)),
  );
}

/** Every cycle found by a depth-first walk, each as the modules in order. */
function cycles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    state.set(v, 1);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (state.get(w) === 1) found.push([...stack.slice(stack.indexOf(w)), w]);
      else if (!state.has(w)) visit(w);
    }
    stack.pop();
    state.set(v, 2);
  };
  for (const v of graph.keys()) if (!state.has(v)) visit(v);
  return found;
}

const LAYER: Record<string, number> = {
  helpers: 0,
  manifests: 0,
  clusters: 1,
  suites: 2,
  cli: 3,
  scripts: 3,
  bin: 3,
};
const ALLOWED_UPWARD = new Set(["manifests/images.ts -> clusters/lab.ts"]);

function upward(graph: Map<string, string[]>): string[] {
  const layer = (f: string) => LAYER[f.split("/")[0] as string] ?? 3;
  return [...graph].flatMap(([f, deps]) =>
    deps.filter((d) => layer(d) > layer(f) && !ALLOWED_UPWARD.has(`${f} -> ${d}`)).map((d) => `${f} -> ${d}`),
  );
}

describe("layers", () => {
  const graph = new Map(
    DIRS.flatMap(sources).map((f) => [f, importsOf(f, readFileSync(join(ROOT, f), "utf8"))] as const),
  );

  it("reads the graph (the walk would pass on an empty one)", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get("clusters/lifecycle.ts")).toContain("clusters/host.ts");
  });

  it("finds a cycle and an upward import when there is one", () => {
    const g = new Map([
      ["clusters/a.ts", ["clusters/b.ts"]],
      ["clusters/b.ts", ["clusters/a.ts", "suites/run-state.ts"]],
      ["helpers/c.ts", ["clusters/a.ts"]],
    ]);
    expect(cycles(g)).toEqual([["clusters/a.ts", "clusters/b.ts", "clusters/a.ts"]]);
    expect(upward(g)).toEqual(["clusters/b.ts -> suites/run-state.ts", "helpers/c.ts -> clusters/a.ts"]);
    expect(
      importsOf("clusters/x.ts", 'import type { A } from "./host.ts";\nexport { b } from "../helpers/b.ts";'),
    ).toEqual(["clusters/host.ts", "helpers/b.ts"]);
  });

  it("no module of ours imports a cycle", () => {
    expect(cycles(graph).map((c) => c.join(" -> "))).toEqual([]);
  });

  it("no import runs upward (helpers < clusters < suites < cli, scripts)", () => {
    expect(upward(graph)).toEqual([]);
  });
});
