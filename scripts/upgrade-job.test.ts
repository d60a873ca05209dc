/**
 * The workflow's upgrade job without GitHub: its gate step (scripts/upgrade-job.sh gate, the same script the
 * workflow calls) on the shipped upgrade bundles — its exit code, its step summary and its annotation — and the
 * run step's command (DRY_RUN=1).
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { isCompressed, readRawFile } from "../helpers/exec/raw-file.ts";

const ROOT = join(import.meta.dirname, "..");
const SCRIPT = join(ROOT, "scripts", "upgrade-job.sh");
const BUNDLES = join(ROOT, "suites", "bundles");
const tmp = mkdtempSync(join(tmpdir(), "dpc-upgrade-job-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function gate(bundle: string, env: Record<string, string> = {}) {
  const summary = join(tmp, `summary-${Math.random().toString(36).slice(2)}.md`);
  const r = spawnSync("bash", [SCRIPT, "gate", bundle], {
    encoding: "utf8",
    env: { ...process.env, GITHUB_STEP_SUMMARY: summary, ...env },
    timeout: 240_000,
  });
  return {
    code: r.status,
    out: r.stdout,
    summary: existsSync(summary) ? readFileSync(summary, "utf8") : "",
  };
}

const shipped = (p: string) => join(BUNDLES, p);

/**
 * A copy of the shipped 1.19 → 1.20 upgrade beside kube-proxy with one line of a request loop log (`log`, in
 * raw/upgrade/) rewritten: the line `pick` finds, as `edit` makes it.
 */
function withLoopLine(
  name: string,
  log: string,
  pick: (lines: string[]) => string | undefined,
  edit: (line: string) => string,
): string {
  const copy = join(tmp, name);
  cpSync(shipped("upgrade-1.19-1.20/kube-proxy"), copy, { recursive: true });
  const path = join(copy, "raw", "upgrade", log);
  const text = readRawFile(path);
  const line = pick(text.split("\n"));
  expect(line, `the line to edit in ${log}`).toBeTruthy();
  const edited = text.replace(line as string, edit(line as string));
  writeFileSync(path, isCompressed(path) ? gzipSync(edited) : edited);
  return copy;
}

describe("scripts/upgrade-job.sh (the workflow's upgrade job)", () => {
  it("run: the upgrade run's command, every topic and the rollback included", () => {
    const out = execFileSync("bash", [SCRIPT, "run", "1.18", "1.19", "kube-proxy", "r1"], {
      encoding: "utf8",
      env: { ...process.env, DRY_RUN: "1", CLUSTER_PROVIDER: "" },
    });
    expect(out.trim()).toBe(
      "env CLUSTER_PROVIDER=kind CILIUM_VERSION=1.18 UPGRADE_TO=1.19 ROLLBACK=1 CONFORMANCE_MODE=kube-proxy RUN_ID=r1 npm run test:conformance",
    );
    expect(spawnSync("bash", [SCRIPT, "run", "1.18"], { encoding: "utf8" }).status).toBe(2);
  });

  it("gate on the shipped 1.19 → 1.20 kpr upgrade (its first recording): what its nested runs skipped makes it INCONCLUSIVE, named, exit 1", () => {
    // recorded before the nested runs had the outside client: the properties the fresh install judges from outside
    // were skipped after each leg, so the gate cannot say HELD (issue 42)
    const g = gate(shipped("upgrade-1.19-1.20/kpr"));
    expect(g.code, g.out).toBe(1);
    expect(g.out).toMatch(
      /^::error title=upgrade::Upgrade Cilium 1\.19\.7 → 1\.20\.2 → 1\.19\.7 \(rollback\), kpr: INCONCLUSIVE/m,
    );
    expect(g.summary).toContain("#### Not judged after a leg, though a fresh install judges them");
    expect(g.summary).toMatch(/`nodeport\.outside-http-200`: skipped after the upgrade/);
    expect(g.summary).toContain("#### The legs");
    expect(g.summary).toMatch(/\| upgrade 1\.19\.7 → 1\.20\.2 \| \d+ \| 0 \(0\) \|/);
    expect(g.summary).toMatch(/After the upgrade vs a fresh install \(`[^`]*1\.20\/kpr`\)/);
  });

  it("gate on the shipped 1.18 → 1.19 kube-proxy upgrade: one request failed during the loop's own stall, inconclusive, exit 1", () => {
    const g = gate(shipped("upgrade-1.18-1.19/kube-proxy"));
    expect(g.code, g.out).toBe(1);
    expect(g.out).toMatch(
      /^::error title=upgrade::Upgrade Cilium 1\.18\.11 → 1\.19\.7, kube-proxy: INCONCLUSIVE/m,
    );
    expect(g.summary).toContain(
      "#### Not conclusive: failures without datapath evidence, or in the load's own stall",
    );
    expect(g.summary).toMatch(/\| upgrade 1\.18\.11 → 1\.19\.7 \| \d+ \| 1 \(1\) \|/);
  });

  it("gate where a known issue appears on the target (1.20.2 beside kube-proxy): REGRESSED, red, as compare; ALLOW_KNOWN=1 accepts it", () => {
    const regressed = gate(shipped("upgrade-1.19-1.20/kube-proxy"));
    expect(regressed.code, regressed.out).toBe(1);
    expect(regressed.out).toMatch(
      /^::error title=upgrade::.*REGRESSED: 5 known issue\(s\) new on the target/m,
    );
    expect(regressed.summary).toMatch(/Known issues new on the target/);
    expect(regressed.summary).toMatch(/`ghost\.fails-fast`: .*48578/);
    // accepted, the known issues no longer decide the word: what is left (the loop's own stall, the nested runs'
    // skips) is not conclusive, still red, and the word is not REGRESSED
    const accepted = gate(shipped("upgrade-1.19-1.20/kube-proxy"), { ALLOW_KNOWN: "1" });
    expect(accepted.code).toBe(1);
    expect(accepted.out).toMatch(/^::error title=upgrade::.*INCONCLUSIVE/m);
    expect(accepted.out).not.toMatch(/REGRESSED/);
  });

  it("gate on an upgrade whose request loop saw a failure without datapath evidence: INCONCLUSIVE, never BROKEN, naming what is missing", () => {
    // the rollback leg's loop log (the last read of it, the one judged): one successful request turned into a failure (WRITTEN BY US, an edit)
    const [log] = readdirSync(join(shipped("upgrade-1.19-1.20/kube-proxy"), "raw", "upgrade"))
      .filter((f) => /logs-request-loop/.test(f))
      .sort()
      .reverse();
    const copy = withLoopLine(
      "broken",
      log as string,
      // one from the middle of the log: inside the leg's window (the log starts before it, ends after settling)
      (lines) => {
        const oks = lines.filter((l) => /"ok":true/.test(l));
        return oks[Math.floor(oks.length * 0.6)];
      },
      (l) => l.replace('"ok":true', '"ok":false,"error":"ECONNREFUSED"'),
    );
    const g = gate(copy, { ALLOW_KNOWN: "1" });
    expect(g.code, g.out).toBe(1);
    expect(g.out).not.toMatch(/BROKEN/);
    expect(g.summary).toMatch(
      /rollback: upgrade\.rollback\.no-failed-requests: no datapath evidence at the failure's time: the leg recorded no capture of data packets/,
    );
  });

  it("gate when the command ends without a word of its own (node killed): an error annotation all the same", () => {
    const bin = join(tmp, "fake-bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "node"), "#!/bin/sh\necho 'Killed'\nexit 137\n", { mode: 0o755 });
    const g = gate(shipped("1.20/kpr"), { PATH: `${bin}:/usr/bin:/bin` });
    expect(g.code).toBe(137);
    expect(g.out).toMatch(/^::error title=upgrade::the upgrade command exited 137 without a verdict/m);
    expect(g.summary).not.toContain("::error");
    // the summary has the script's own words, never the program's output (issue 45)
    expect(g.summary).toMatch(/^\*\*The upgrade gate\*\* ended with exit 137 without a verdict/);
    expect(g.summary).not.toContain("Killed");
  });

  it("gate on a bundle that is not an upgrade: one line and an error annotation, exit 2", () => {
    const g = gate(shipped("1.20/kpr"));
    expect(g.code).toBe(2);
    expect(g.out).toMatch(/is not an upgrade bundle/);
    expect(g.out).toMatch(/^::error title=upgrade::/m);
  });
});
