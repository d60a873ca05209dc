/**
 * `.ci/run` on the machines it runs on, in a sandbox WRITTEN BY US: `id`, `apt-get`, `uname`, `npm` and `npx`
 * are scripts that log what they were asked (apt-get fails for a package the distribution does not have, as
 * Ubuntu 24.04 has no `bpftool` or usable `chromium` package), and /etc/os-release is a file of the test's
 * (OS_RELEASE). Nothing is installed and no test runs.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs .ci/run as root on `distro` whose apt has `packages`; what apt-get and npm were asked, and its output. */
function ciRun(distro: "debian" | "ubuntu", packages: string[], browser: string | null) {
  const dir = mkdtempSync(join(tmpdir(), "dpc-ci-run-"));
  dirs.push(dir);
  const bin = join(dir, "bin");
  mkdirSync(bin);
  const log = join(dir, "log");
  writeFileSync(log, "");
  const tool = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/bash\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  tool("id", "echo 0");
  tool("uname", "echo 6.8.0-1021-azure");
  tool(
    "apt-get",
    `echo "apt-get $*" >> ${log}
[ "$1" = install ] || exit 0
for p in "$@"; do
  case "$p" in -*|install) continue;; esac
  case " ${packages.join(" ")} " in *" $p "*) ;; *) echo "E: Unable to locate package $p" >&2; exit 100;; esac
done`,
  );
  tool(
    "npm",
    `echo "npm $* CHROME_PATH=\${CHROME_PATH:-} CHROMIUM_PATH=\${CHROMIUM_PATH:-} CLUSTER_PROVIDER=\${CLUSTER_PROVIDER:-}" >> ${log}`,
  );
  tool(
    "npx",
    `echo "npx $*" >> ${log}
[ "$2" = helpers/testing/browser.ts ] || exit 0
${browser ? `echo ${browser}` : 'echo "no Chromium or Google Chrome found" >&2; exit 1'}`,
  );
  const osRelease = join(dir, "os-release");
  writeFileSync(osRelease, `ID=${distro}\nVERSION_ID="${distro === "ubuntu" ? "24.04" : "12"}"\n`);
  const r = spawnSync("bash", [join(ROOT, ".ci", "run")], {
    encoding: "utf8",
    env: { PATH: `${bin}:/usr/bin:/bin`, OS_RELEASE: osRelease, HOME: dir },
  });
  return {
    code: r.status,
    out: `${r.stdout}${r.stderr}`,
    log: readFileSync(log, "utf8").split("\n").filter(Boolean),
  };
}

const COMMON = [
  "iproute2",
  "iptables",
  "curl",
  "clang",
  "llvm",
  "libbpf-dev",
  "tcpdump",
  "net-tools",
  "procps",
  "jq",
];
const installs = (log: string[]) =>
  log
    .filter((l) => l.startsWith("apt-get install"))
    .flatMap((l) =>
      l
        .split(" ")
        .filter((w) => !w.startsWith("-"))
        .slice(2),
    );

describe(".ci/run", () => {
  it("Debian: apt's bpftool and chromium; the browser found is what the tests drive", () => {
    const r = ciRun("debian", [...COMMON, "bpftool", "chromium"], "/usr/bin/chromium");
    expect(r.code).toBe(0);
    expect(installs(r.log)).toEqual(expect.arrayContaining(["bpftool", "chromium", ...COMMON]));
    expect(r.log).toContain(
      "npm test CHROME_PATH=/usr/bin/chromium CHROMIUM_PATH=/usr/bin/chromium CLUSTER_PROVIDER=none",
    );
  });

  it("ubuntu-24.04: no bpftool or chromium package asked for; linux-tools for the kernel; the image's Google Chrome", () => {
    const r = ciRun(
      "ubuntu",
      [...COMMON, "linux-tools-common", "linux-tools-6.8.0-1021-azure"],
      "/usr/bin/google-chrome",
    );
    expect(r.code).toBe(0);
    expect(installs(r.log)).not.toContain("bpftool");
    expect(installs(r.log)).not.toContain("chromium");
    expect(installs(r.log)).toEqual(
      expect.arrayContaining(["linux-tools-common", "linux-tools-6.8.0-1021-azure"]),
    );
    expect(r.out).toContain("[.ci/run] browser for the report's tests: /usr/bin/google-chrome");
    expect(r.log).toContain(
      "npm test CHROME_PATH=/usr/bin/google-chrome CHROMIUM_PATH=/usr/bin/google-chrome CLUSTER_PROVIDER=none",
    );
  });

  it("what is not there is said in one line and the tests still run (their skips say why)", () => {
    const r = ciRun("ubuntu", COMMON, null);
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      "[.ci/run] bpftool: no linux-tools-6.8.0-1021-azure package for this kernel; the tests that need bpftool are skipped with that reason",
    );
    expect(r.out).toContain("no Chromium or Google Chrome found");
    expect(r.log).toContain("npm test CHROME_PATH= CHROMIUM_PATH= CLUSTER_PROVIDER=none");
    const d = ciRun("debian", COMMON, null);
    expect(d.code).toBe(0);
    expect(d.out).toContain("[.ci/run] bpftool: apt-get could not install it");
    expect(d.out).toContain("[.ci/run] chromium: apt-get could not install it");
  });
});
