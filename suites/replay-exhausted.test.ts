import { appendFileSync, cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { checkBundle } from "../helpers/check.ts";
import { isCompressed, readRawFile } from "../helpers/exec/raw-file.ts";
import { shipped } from "../helpers/testing/tamper.ts";
import { TOPICS } from "./topics.ts";

/**
 * A bundle whose outputs contradict a wait must fail, and fast: the scale topic waits for kube-proxy's KUBE-SEP
 * chains (or for there being no kube-proxy). Kube-proxy chains without web's KUBE-SEP chains, added to every
 * iptables-save output of the recorded kpr bundle, make that wait impossible; replay used to repeat the last
 * recording with a clock that never moved, and `check` spun for over 15 minutes (issue 19).
 */
const dir = mkdtempSync(join(tmpdir(), "dpc-contradict-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** WRITTEN BY US: a kube-proxy nat table of another Service (no KUBE-SEP chain of cca-dp/web). */
const KUBE_PROXY_CHAINS = [
  "*nat",
  ":KUBE-SERVICES - [0:0]",
  ":KUBE-SVC-CONTRADICT0001 - [0:0]",
  '-A KUBE-SERVICES -d 10.96.0.99/32 -p tcp -m comment --comment "other/svc:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-CONTRADICT0001',
  "COMMIT",
  "",
].join("\n");

describe("check on a bundle that contradicts a wait", () => {
  it("ends within seconds, and every property is judged on what the bundle shows (expected vs observed)", async () => {
    cpSync(shipped("kpr"), dir, { recursive: true });
    let touched = 0;
    for (const topic of readdirSync(join(dir, "raw")))
      for (const f of readdirSync(join(dir, "raw", topic)))
        if (/-iptables-save(-c)?(-t-\w+)?\.txt(\.gz)?$/.test(f)) {
          const path = join(dir, "raw", topic, f);
          if (isCompressed(path)) writeFileSync(path, gzipSync(readRawFile(path) + KUBE_PROXY_CHAINS));
          else appendFileSync(path, KUBE_PROXY_CHAINS);
          touched++;
        }
    expect(touched).toBeGreaterThan(5);
    const t0 = performance.now();
    const r = await checkBundle(dir, TOPICS);
    const seconds = (performance.now() - t0) / 1000;
    expect(seconds).toBeLessThan(20);
    // the wait for web's KUBE-SEP chains could never be met; it ends with the last recorded observation, and
    // the properties are judged on it: the added chains are kube-proxy's (a failure with expected and observed),
    // none of them is web's (what the scale property claims of this kpr bundle: it holds)
    const chains = r.verdicts.find((v) => v.id === "iptables.kube-proxy-chains");
    expect(chains?.status).toBe("fail");
    expect(chains?.message).toMatch(/expected: 0\n\s+observed: [1-9]/);
    expect(chains?.message).toContain("KUBE-SVC-CONTRADICT0001");
    expect(chains?.message).not.toMatch(/could not be observed|ran out/);
    const sep = r.verdicts.find((v) => v.id === "scale.kube-sep-chains");
    expect(sep?.status).toBe("pass");
    expect(sep?.message).not.toMatch(/could not be observed/);
  }, 60_000);
});

describe("check on a kpr bundle with one KUBE-SVC line added to the iptables topic's iptables-save (issue 27)", () => {
  it("judges it on the evidence: expected 0, observed 1, the added line quoted; not a wait that ran out", async () => {
    const one = mkdtempSync(join(tmpdir(), "dpc-kube-svc-"));
    try {
      cpSync(shipped("kpr"), one, { recursive: true });
      const [f] = readdirSync(join(one, "raw", "iptables")).filter((n) => n.includes("iptables-save"));
      const path = join(one, "raw", "iptables", f as string);
      // WRITTEN BY US: a kube-proxy jump to a Service chain, inserted into the nat table
      const added = "-A KUBE-SERVICES -d 10.96.0.77/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-TAMPERED00000001";
      const text = readRawFile(path).replace(/^\*nat$/m, `*nat\n:KUBE-SERVICES - [0:0]\n${added}`);
      if (isCompressed(path)) writeFileSync(path, gzipSync(text));
      else writeFileSync(path, text);
      const r = await checkBundle(one, TOPICS);
      const v = r.verdicts.find((x) => x.id === "iptables.kube-svc-lines");
      expect(v?.status).toBe("fail");
      expect(v?.expected).toBe("0");
      expect(v?.observed).toBe("1");
      expect(v?.message).toContain(added);
      expect(v?.message).not.toMatch(/could not be observed|ran out/);
    } finally {
      rmSync(one, { recursive: true, force: true });
    }
  }, 60_000);
});
