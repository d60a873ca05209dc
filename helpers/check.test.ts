import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../cli/main.ts";
import { SHIPPED_BUNDLES } from "../suites/environment.ts";
import { checkBundle } from "./check.ts";
import type { CallRecord } from "./exec/record.ts";

const tmp = mkdtempSync(join(tmpdir(), "dpc-check-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A copy of a shipped bundle with one recorded output edited. */
function tampered(mode: string, topic: string, argv: string[], edit: (text: string) => string): string {
  const dir = join(tmp, `${mode}-${topic}-${Math.random().toString(36).slice(2)}`);
  cpSync(join(import.meta.dirname, "..", "suites", "bundles", mode), dir, { recursive: true });
  const calls = readFileSync(join(dir, "calls", `${topic}.jsonl`), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as CallRecord);
  const call = calls.find((c) => JSON.stringify(c.argv) === JSON.stringify(argv));
  if (!call) throw new Error(`no ${argv.join(" ")} in ${topic}`);
  const file = join(dir, call.stdoutFile);
  writeFileSync(file, edit(readFileSync(file, "utf8")));
  return dir;
}

describe("check BUNDLE", () => {
  it.each(SHIPPED_BUNDLES)("the shipped bundle %s passes every property", async (dir) => {
    const r = await checkBundle(dir);
    expect(r.verdicts.filter((v) => v.status !== "pass").map((v) => v.message)).toEqual([]);
  });

  it("KUBE-SVC rules in a kpr bundle fail, naming the property and the offending line", async () => {
    const line =
      '-A KUBE-SERVICES -d 10.96.112.41/32 -p tcp -m comment --comment "cca-dp/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-XGLOHA7QRQ3V22RZ';
    const dir = tampered("kpr", "iptables", ["iptables-save"], (t) => t.replace("COMMIT", `${line}\nCOMMIT`));
    let out = "";
    const code = await main(["check", dir], {
      out: (s) => {
        out += s;
      },
      err: () => {},
      readStdin: async () => "",
    });
    expect(code).toBe(1);
    expect(out).toContain("FAIL  iptables.kube-svc-lines");
    expect(out).toContain("expected: 0\n  observed: 1");
    expect(out).toContain(line);
  });

  it("a ghost that times out in a kube-proxy bundle fails ghost.fails-fast", async () => {
    const dir = tampered(
      "kube-proxy",
      "ghost",
      [
        "curl",
        "-sS",
        "-v",
        "-o",
        "/dev/null",
        "--max-time",
        "5",
        "-w",
        "http_code=%{http_code} time_total=%{time_total}",
        "http://10.96.201.7/",
      ],
      () => "http_code=000 time_total=5.004121",
    );
    const calls = join(dir, "calls", "ghost.jsonl");
    writeFileSync(calls, readFileSync(calls, "utf8").replace(/"exitCode":7/g, '"exitCode":28'));
    const r = await checkBundle(dir);
    const failed = r.verdicts.filter((v) => v.status === "fail").map((v) => v.id);
    expect(failed).toEqual(["ghost.fails-fast", "ghost.seconds"]);
  });
});
