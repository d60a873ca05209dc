import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
const BIN = join(ROOT, "bin", "datapath-conformance.mjs");
// inside the repository, as the real cache is: the bundle's packages resolve from its node_modules
mkdirSync(join(ROOT, "node_modules", ".cache"), { recursive: true });
const cache = mkdtempSync(join(ROOT, "node_modules", ".cache", "dpc-cli-test-"));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

/** The CLI as a user runs it, with its own bundle cache; stderr's first line says how it was loaded. */
function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: "utf8",
    env: { ...process.env, DATAPATH_CONFORMANCE_CACHE: cache, DATAPATH_CONFORMANCE_DEBUG: "1", ...env },
  });
  return { code: r.status, out: r.stdout, how: r.stderr.split("\n")[0] };
}

describe("bin/datapath-conformance.mjs", { timeout: 60_000 }, () => {
  it("bundles the CLI on first use, then loads the bundle; a changed source rebuilds it", () => {
    const first = cli(["--version"]);
    expect(first).toMatchObject({ code: 0, how: "cli: bundle-built" });
    expect(first.out).toMatch(/^datapath-conformance \d+\.\d+\.\d+ /);
    expect(cli(["--version"])).toEqual({ ...first, how: "cli: bundle" });
    // the manifest holds a hash per source file the bundle was built from: one that no longer matches rebuilds
    const manifestFile = join(cache, "cli.json");
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
    expect(Object.keys(manifest.inputs)).toEqual(expect.arrayContaining(["cli/main.ts", "suites/topics.ts"]));
    manifest.inputs["suites/topics.ts"] = "0".repeat(40);
    writeFileSync(manifestFile, JSON.stringify(manifest));
    expect(cli(["--version"])).toEqual(first);
  });

  it("a command imports only the packages it needs (the start costs no more CPU than it must)", () => {
    // a resolve hook, written here, prints every package the process imports; importing
    // @kubernetes/client-node cost ~1 s of CPU, esbuild 0.2-0.3 s, yaml ~0.1 s, on every start
    const hooks = join(cache, "hooks.mjs");
    writeFileSync(
      hooks,
      [
        "export async function resolve(specifier, context, next) {",
        '  if (!/^(\\.|node:|file:|\\/)/.test(specifier)) process.stderr.write("package " + specifier + "\\n");',
        "  return next(specifier, context);",
        "}",
      ].join("\n"),
    );
    const register = join(cache, "register.mjs");
    writeFileSync(
      register,
      `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    const packages = (args: string[]) => {
      cli(["--version"]); // built first, so that building (which imports esbuild) is not counted
      const r = spawnSync(process.execPath, ["--import", register, BIN, ...args], {
        encoding: "utf8",
        env: { ...process.env, DATAPATH_CONFORMANCE_CACHE: cache },
      });
      expect(r.status, r.stderr).toBe(0);
      return [...new Set([...r.stderr.matchAll(/^package (\S+)$/gm)].map((m) => m[1]))].sort();
    };
    expect(packages(["--version"])).toEqual([]);
    expect(packages(["formats"])).toEqual([]);
    // check of a bundle reads it (yaml for a ConfigMap's data) but talks to no API server
    const check = packages(["check", join(ROOT, "suites", "bundles", "1.20", "kpr")]);
    expect(check).not.toContain("@kubernetes/client-node");
    expect(check).not.toContain("esbuild");
  });

  it("the bundle and tsx give the same output and exit code", () => {
    const args = ["check", join(ROOT, "suites", "bundles", "1.19", "drop-kpr")];
    const bundled = cli(args);
    const tsx = cli(args, { DATAPATH_CONFORMANCE_TSX: "1" });
    expect(bundled.how).toMatch(/^cli: bundle/);
    expect(tsx.how).toBe("cli: tsx");
    expect(bundled.out).toContain("drop-kpr: mode kpr");
    expect({ ...bundled, how: "" }).toEqual({ ...tsx, how: "" });
  });
});
