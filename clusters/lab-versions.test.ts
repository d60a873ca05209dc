/**
 * The lab builds any Cilium version, and says in one line per module file what the module proxy refuses (issue
 * 38, item 3): clusters/lab/lab.sh sourced with LAB_SH_FUNCTIONS=1 into bash, in a sandbox (its cache a
 * temporary folder). The module proxies are FOLDERS WRITTEN BY US served as file:// proxies to the real `go`
 * (`go mod download`, `go mod edit`: no build, no network), holding a module named github.com/cilium/cilium
 * with a go.mod and one file of ours; docker is a fake of ours that is not running. Go's error lines are quoted as
 * go prints them (the first one as it answered for Cilium 1.19.8 on 2026-12-06).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { LAB_SCRIPT } from "./lab.ts";

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const hasGo = (() => {
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** A zip of the files (name → text), stored uncompressed: what a module proxy serves as a module's .zip. */
function zip(files: Record<string, string>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of Object.entries(files)) {
    const data = Buffer.from(text);
    const n = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(n.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(n.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, n, data);
    centrals.push(central, n);
    offset += local.length + n.length + data.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

const CILIUM = "github.com/cilium/cilium";
/** Cilium's go.mod as written by us: the gobgp commit 1.20.2 pins (cilium-deps.tsv), and another mcs-api. */
const GO_MOD = `module ${CILIUM}\n\ngo 1.24\n\nrequire (\n\tgithub.com/osrg/gobgp/v4 v4.6.1-0.20260630022313-d6dee8360046\n\tsigs.k8s.io/mcs-api/controllers v0.6.0\n)\n`;

/** A file:// module proxy of ours holding Cilium `v`: its .info, .zip and (unless left out) .mod. */
function proxy(root: string, v: string, serve: { mod: boolean; info: boolean }): string {
  const dir = join(root, "proxy");
  const at = join(dir, CILIUM, "@v");
  mkdirSync(at, { recursive: true });
  if (serve.info)
    writeFileSync(join(at, `v${v}.info`), `{"Version":"v${v}","Time":"2026-12-01T00:00:00Z"}\n`);
  if (serve.mod) writeFileSync(join(at, `v${v}.mod`), GO_MOD);
  writeFileSync(
    join(at, `v${v}.zip`),
    zip({ [`${CILIUM}@v${v}/go.mod`]: GO_MOD, [`${CILIUM}@v${v}/cilium.go`]: "package cilium\n" }),
  );
  return `file://${dir}`;
}

const FAKE_DOCKER = `#!/usr/bin/env bash
# fake docker: never running
exit 1
`;

function sandbox(): { root: string; cache: string; bin: string } {
  const root = mkdtempSync(join(tmpdir(), "dpc-lab-versions-"));
  roots.push(root);
  const bin = join(root, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "docker"), FAKE_DOCKER);
  chmodSync(join(bin, "docker"), 0o755);
  return { root, cache: join(root, "cache"), bin };
}

/** Runs lab.sh's functions in the sandbox (GOPROXY: the given proxy); returns what it printed, `say` too. */
function labSh(s: { cache: string; bin: string }, script: string, goproxy = "off") {
  try {
    const out = execFileSync(
      "bash",
      [
        "-c",
        `set -euo pipefail; source ${JSON.stringify(LAB_SCRIPT)}
        [ "$(command -v docker)" = ${JSON.stringify(join(s.bin, "docker"))} ] || { echo "sandbox guard: docker is not the fake"; exit 97; }
        { ${script}; } 2>&1`,
      ],
      {
        env: {
          ...process.env,
          PATH: `${s.bin}:${process.env.PATH}`,
          LAB_CACHE: s.cache,
          LAB_SH_FUNCTIONS: "1",
          GOPROXY: goproxy,
          GOFLAGS: "",
        },
        encoding: "utf8",
      },
    );
    return { out: out.replace(/^\[lab \d\d:\d\d:\d\d\] /gm, ""), code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; status?: number };
    if (e.status === 97) throw new Error(String(e.stdout));
    return { out: String(e.stdout ?? "").replace(/^\[lab \d\d:\d\d:\d\d\] /gm, ""), code: e.status ?? 1 };
  }
}

describe("the lab builds any Cilium version (sandbox, proxies of ours)", { timeout: 30_000 }, () => {
  it("steps VERSION: that version's build and image before the node image; no version, one line", () => {
    const s = sandbox();
    const steps = labSh(s, "ask_cilium 1.19.8; lab_steps").out.trim().split("\n");
    expect(steps.slice(-3)).toEqual(["cilium-1.19.8", "image-cilium-1.19.8", "image-node"]);
    const cli = execFileSync("bash", [LAB_SCRIPT, "steps", "1.21.0-rc.1"], {
      env: { ...process.env, LAB_CACHE: s.cache },
      encoding: "utf8",
    }).split("\n");
    expect(cli).toContain("image-cilium-1.21.0-rc.1");
    const bad = labSh(s, "ask_cilium 1.19.x");
    expect(bad.code).toBe(1);
    expect(bad.out.trim()).toBe("error: '1.19.x' is no Cilium version (e.g. 1.19.8, 1.21.0-rc.1)");
  });

  it("what the proxy refused, from go's output: one line per module file (module, version, .info/.mod/.zip)", () => {
    const s = sandbox();
    // go's lines as it prints them: in `go mod download -json` (escaped), in a build (a package's import), and
    // a module path with upper case (the proxy's !x encoding); the same file twice is said once
    const goOutput = [
      '\t"Error": "github.com/cilium/cilium@v1.19.8: reading https://proxy.golang.org/github.com/cilium/cilium/@v/v1.19.8.mod: 403 Forbidden\\n\\tserver response: This module version is not available.",',
      "pkg/bgp/x.go:5:2: github.com/osrg/gobgp/v4@v4.9.0: reading https://proxy.golang.org/github.com/osrg/gobgp/v4/@v/v4.9.0.zip: 403 Forbidden",
      "go: github.com/BurntSushi/toml@v1.5.0: reading https://proxy.golang.org/github.com/!burnt!sushi/toml/@v/v1.5.0.info: 410 Gone",
      "pkg/bgp/y.go:6:2: github.com/osrg/gobgp/v4@v4.9.0: reading https://proxy.golang.org/github.com/osrg/gobgp/v4/@v/v4.9.0.zip: 403 Forbidden",
    ].join("\n");
    writeFileSync(join(s.root, "go.out"), `${goOutput}\n`);
    const r = labSh(
      s,
      `proxy_refusals <${JSON.stringify(join(s.root, "go.out"))}`,
      "https://proxy.golang.org,direct",
    );
    expect(r.out.trim().split("\n")).toEqual([
      "refused by the module proxy: github.com/cilium/cilium v1.19.8 .mod (403 Forbidden)",
      "refused by the module proxy: github.com/osrg/gobgp/v4 v4.9.0 .zip (403 Forbidden)",
      "refused by the module proxy: github.com/BurntSushi/toml v1.5.0 .info (410 Gone)",
    ]);
  });

  it("a step the proxy refused: FAILED with those lines, kept for status, which says the version is not built and why", () => {
    const s = sandbox();
    const refusing = `build_refused() { echo 'go: github.com/cilium/cilium@v1.21.0: reading https://proxy.golang.org/github.com/cilium/cilium/@v/v1.21.0.info: 403 Forbidden'; return 1; }`;
    const r = labSh(
      s,
      `${refusing}; ask_cilium 1.21.0; step cilium-1.21.0 build_refused`,
      "https://proxy.golang.org,direct",
    );
    expect(r.code).toBe(1);
    const lines = r.out.trim().split("\n");
    expect(lines[1]).toBe(
      "cilium-1.21.0: FAILED: refused by the module proxy: github.com/cilium/cilium v1.21.0 .info (403 Forbidden)",
    );
    expect(lines[2]).toBe(`cilium-1.21.0: the whole output: ${join(s.cache, "log", "cilium-1.21.0.log")}`);
    // a step that failed otherwise shows its log's last lines, as before
    const other = labSh(
      s,
      "build_other() { echo 'compile error'; return 1; }; step cilium-1.21.1 build_other",
    );
    expect(other.out).toMatch(/cilium-1\.21\.1: FAILED after \d+ s; last lines of .*\ncompile error\n/);
    // status: versions.env's versions, and those asked for (a stamp or a log), each built or not, and why
    mkdirSync(join(s.cache, "out"), { recursive: true });
    writeFileSync(join(s.cache, "stamps", "cilium-1.19.8"), "1 s on now\n\n");
    writeFileSync(join(s.cache, "stamps", "image-cilium-1.19.8"), "1 s on now\n\n");
    writeFileSync(join(s.cache, "out", "cilium-1.19.8.patch.txt"), "none: built unchanged\n");
    const status = labSh(s, "cmd_status").out.split("\n");
    expect(status).toContain("  1.19.8       built (asked for): none: built unchanged");
    expect(status).toContain(
      "  1.21.0       not built (asked for): refused by the module proxy: github.com/cilium/cilium v1.21.0 .info (403 Forbidden)",
    );
    expect(status.find((l) => l.startsWith("  1.21.1 "))).toMatch(/^ {2}1\.21\.1 +not built \(asked for\); /);
    expect(status.find((l) => l.startsWith("  1.20.2 "))).toMatch(
      /^ {2}1\.20\.2 +not built \(clusters\/lab\/versions\.env\); declared in cilium-deps\.tsv: replace github\.com\/osrg\/gobgp\/v4: /,
    );
  });

  it.skipIf(!hasGo)(
    "the module's .mod refused, its .info and .zip served: built from the zip, its go.mod as the cache's .mod",
    () => {
      const s = sandbox();
      const goproxy = proxy(s.root, "1.19.8", { mod: false, info: true });
      const r = labSh(s, "fetch_cilium 1.19.8", goproxy);
      expect(r.code, r.out).toBe(0);
      expect(r.out.trim()).toBe(
        "source: the module proxy refuses github.com/cilium/cilium v1.19.8 .mod but serves its .info and .zip; built from the zip, whose go.mod is the module's",
      );
      const cached = join(s.cache, "gomod", "cache", "download", CILIUM, "@v", "v1.19.8.mod");
      expect(readFileSync(cached, "utf8")).toBe(GO_MOD);
      expect(existsSync(join(s.cache, "gomod", `${CILIUM}@v1.19.8`, "cilium.go"))).toBe(true);
      // served whole: nothing said
      const whole = sandbox();
      expect(
        labSh(whole, "fetch_cilium 1.19.8", proxy(whole.root, "1.19.8", { mod: true, info: true })),
      ).toEqual({ out: "", code: 0 });
    },
  );

  it.skipIf(!hasGo)("its .info refused too: no build, and the step names what was refused", () => {
    const s = sandbox();
    const goproxy = proxy(s.root, "1.21.0", { mod: false, info: false });
    const r = labSh(s, "ask_cilium 1.21.0; step cilium-1.21.0 fetch_cilium 1.21.0", goproxy);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /\ncilium-1\.21\.0: FAILED: refused by the module proxy: github\.com\/cilium\/cilium v1\.21\.0 \.info \(no such file or directory\)\n/,
    );
    expect(existsSync(join(s.cache, "gomod", `${CILIUM}@v1.21.0`))).toBe(false);
  });

  it.skipIf(!hasGo)(
    "a version the replace table has no line for: the lines whose pinned version its go.mod selects apply, named",
    () => {
      const s = sandbox();
      const src = join(s.root, "src");
      mkdirSync(src);
      writeFileSync(join(src, "go.mod"), GO_MOD);
      const r = labSh(s, `apply_cilium_deps 1.20.3 ${JSON.stringify(src)}`);
      expect(r.code, r.out).toBe(0);
      // the gobgp commit is pinned as 1.20.2 pins it; mcs-api at another version than the table's: left alone
      expect(r.out.trim().split("\n")).toEqual([
        "replace github.com/osrg/gobgp/v4: github.com/osrg/gobgp/v4@v4.6.1-0.20260630022313-d6dee8360046 => github.com/osrg/gobgp/v4@v4.7.0 (cilium-deps.tsv's line for 1.20.2: 1.20.3 pins the same)",
      ]);
      expect(readFileSync(join(src, "go.mod"), "utf8")).toContain(
        "replace github.com/osrg/gobgp/v4 => github.com/osrg/gobgp/v4 v4.7.0",
      );
      // a version the table declares keeps its own lines, and a mismatch stops the build as before
      const own = labSh(s, `apply_cilium_deps 1.20.2 ${JSON.stringify(src)}`);
      expect(own.code).toBe(1);
      expect(own.out).toMatch(
        /error: cilium-deps\.tsv: Cilium 1\.20\.2 selects github\.com\/osrg\/gobgp\/v4 as github\.com\/osrg\/gobgp\/v4@v4\.7\.0, the table says /,
      );
    },
  );
});
