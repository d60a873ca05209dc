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
  it("ends within seconds, and the property fails naming the wait whose recordings ran out", async () => {
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
    const sep = r.verdicts.find((v) => v.id === "scale.kube-sep-chains");
    expect(sep?.status).toBe("fail");
    expect(sep?.message).toMatch(
      /ran out while waiting for kube-proxy's 4 KUBE-SEP chains for cca-dp\/web .*; last observation: 0 KUBE-SEP chains/,
    );
    // the contradiction also shows where it is read directly
    expect(r.verdicts.find((v) => v.id === "iptables.kube-proxy-chains")?.status).toBe("fail");
  }, 60_000);
});
