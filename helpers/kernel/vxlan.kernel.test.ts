/**
 * The notebook's §8 on the real kernel: two lab namespaces joined by a VXLAN tunnel (port 8472, as
 * Cilium's) over their veth. A ClusterIP-like VIP is DNATed in namespace a; tcpdump on the underlay
 * shows the backend address inside the tunnel, never the VIP: translation happens before encapsulation.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildVxlanRecord } from "../../suites/12-vxlan/vxlan.topic.ts";
import { parseTcpdump } from "../parse/tcpdump.ts";
import { NOT_RECORDED, RawText } from "../records/evidence.ts";
import { NetnsLab } from "./netns-lab.ts";

const why = NetnsLab.unavailable(["ip", "iptables", "curl", "tcpdump"]);
const VIP = "10.96.0.20";

describe.skipIf(why !== null)(`VXLAN capture on the real kernel${why ? ` (skipped: ${why})` : ""}`, () => {
  let lab: NetnsLab;
  let overlayA: string;
  let overlayB: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    lab = await NetnsLab.create();
    const n = lab.ipA.split(".")[2];
    overlayA = `10.202.${n}.1`;
    overlayB = `10.202.${n}.2`;
    for (const [ns, local, remote, overlay, dev] of [
      [lab.a, lab.ipA, lab.ipB, overlayA, lab.devA],
      [lab.b, lab.ipB, lab.ipA, overlayB, lab.devB],
    ] as const) {
      await lab.must(ns, [
        "ip",
        "link",
        "add",
        "dpcvx",
        "type",
        "vxlan",
        "id",
        "42",
        "local",
        local,
        "remote",
        remote,
        "dstport",
        "8472",
        "dev",
        dev,
      ]);
      await lab.must(ns, ["ip", "addr", "add", `${overlay}/24`, "dev", "dpcvx"]);
      await lab.must(ns, ["sysctl", "-qw", "net.ipv6.conf.dpcvx.disable_ipv6=1"]);
      await lab.must(ns, ["ip", "link", "set", "dpcvx", "up"]);
    }
    await lab.httpServer(lab.b, 8080);
    // the "Service": VIP → backend on the other side of the tunnel, routed into the tunnel only
    await lab.must(lab.a, ["ip", "route", "add", `${VIP}/32`, "dev", "dpcvx"]);
    await lab.must(lab.a, [
      "iptables",
      "-t",
      "nat",
      "-A",
      "OUTPUT",
      "-d",
      `${VIP}/32`,
      "-p",
      "tcp",
      "--dport",
      "80",
      "-j",
      "DNAT",
      "--to-destination",
      `${overlayB}:8080`,
    ]);
  });

  afterAll(async () => {
    for (const c of children) c.kill("SIGKILL");
    await lab?.destroy();
  });

  it("inner packets carry the backend address, the outer ones the tunnel endpoints on 8472", async () => {
    const cap = spawn(
      "ip",
      ["netns", "exec", lab.b, "tcpdump", "-l", "-nn", "-i", lab.devB, "-T", "vxlan", "udp", "port", "8472"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    children.push(cap);
    let out = "";
    let err = "";
    cap.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const listening = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`tcpdump did not start: ${err}`)), 10_000);
      cap.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
        if (err.includes("listening on")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    await listening;
    const r = await lab.run(lab.a, [
      "curl",
      "-sS",
      "-o",
      "/dev/null",
      "--max-time",
      "5",
      "-w",
      "%{http_code}",
      `http://${VIP}/`,
    ]);
    expect(r.stdout).toBe("200");
    // the reply's tunnel packet is the last to arrive: poll the capture for it (deadline 5 s), then stop
    const t0 = Date.now();
    while (!out.includes(`IP ${overlayB}.8080 > ${overlayA}.`) && Date.now() - t0 < 5000)
      await new Promise((res) => setTimeout(res, 50));
    cap.kill("SIGTERM");
    const capture = parseTcpdump(out);
    expect(capture.packets.length).toBeGreaterThanOrEqual(2);
    for (const p of capture.packets) {
      expect([p.outer.src, p.outer.dst].some((x) => x.endsWith(":8472"))).toBe(true);
      expect(p.inner).not.toBeNull();
    }
    expect(capture.packets.some((p) => p.inner?.proto === "IP" && p.inner.src === `${overlayB}:8080`)).toBe(
      true,
    );
    const rec = buildVxlanRecord({
      clusterIp: VIP,
      backend: `${overlayB}:8080`,
      capture: { parsed: capture, raw: RawText.of(out, { file: NOT_RECORDED }) },
    }).record;
    expect(rec.inner_destinations).toContain(`${overlayB}:8080`);
    expect(rec.inner_destinations.some((d) => d.startsWith(`${VIP}:`))).toBe(false);
  });
});
