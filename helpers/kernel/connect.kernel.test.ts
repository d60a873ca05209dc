/**
 * Connection outcomes on the real kernel, between two namespaces this file creates: curl exit classes
 * for REJECT (fast, 7) vs DROP (28 at the deadline), the errno curl -v reports, listeners counted with
 * `ss -Htln`, and `ip route get` with a tunnel-sized MTU.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CurlResult, curlArgv, parseCurl } from "../parse/curl.ts";
import { parseIpRoute } from "../parse/ip-route.ts";
import { parseSs } from "../parse/ss.ts";
import { NetnsLab } from "./netns-lab.ts";

const why = NetnsLab.unavailable(["ip", "iptables", "curl", "ss"]);

describe.skipIf(why !== null)(`connections on the real kernel${why ? ` (skipped: ${why})` : ""}`, () => {
  let lab: NetnsLab;
  beforeAll(async () => {
    lab = await NetnsLab.create();
    await lab.httpServer(lab.b, 8080);
    const rule = (port: string, ...target: string[]) =>
      lab.must(lab.b, ["iptables", "-A", "INPUT", "-p", "tcp", "--dport", port, "-j", ...target]);
    await rule("9001", "REJECT", "--reject-with", "tcp-reset");
    await rule("9002", "DROP");
    await rule("9004", "REJECT", "--reject-with", "icmp-port-unreachable");
    await rule("9005", "REJECT", "--reject-with", "icmp-host-unreachable");
  });
  afterAll(() => lab?.destroy());

  async function curl(url: string, maxTime = 5): Promise<CurlResult> {
    const r = await lab.run(lab.a, curlArgv(url, { maxTime }));
    return parseCurl({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });
  }

  it("a listening backend answers HTTP 200", async () => {
    expect((await curl(`http://${lab.ipB}:8080/`)).verdict).toBe("HTTP 200");
  });

  it.each([
    ["9001", "REJECT tcp-reset", "REFUSED", "ECONNREFUSED"],
    ["9003", "no listener (kernel RST)", "REFUSED", "ECONNREFUSED"],
    ["9004", "REJECT icmp-port-unreachable (Cilium's reject answer)", "REFUSED", "ECONNREFUSED"],
    ["9005", "REJECT icmp-host-unreachable", "UNREACHABLE", "EHOSTUNREACH"],
  ])("port %s, %s: curl exit 7 (%s, %s) well under a second", async (port, _what, cls, errno) => {
    const r = await curl(`http://${lab.ipB}:${port}/`);
    expect(r).toMatchObject({ exitCode: 7, class: cls, errno, exitCodeSource: "status" });
    expect(r.timeTotal).toBeLessThan(1);
  });

  it("DROP: curl exit 28 (TIMEOUT) at the deadline, not before", async () => {
    const r = await curl(`http://${lab.ipB}:9002/`, 2);
    expect(r).toMatchObject({ exitCode: 28, class: "TIMEOUT" });
    expect(r.timeTotal).toBeGreaterThanOrEqual(1.9);
  });

  it("no route: exit 7 at once, the errno from curl's `Immediate connect fail … Network is unreachable` line", async () => {
    // until the parser read `Immediate connect fail` (the line the real ghost probe printed on the lab
    // cluster), this case was CONNECT_FAILED with no errno: curl did name it all along
    const r = await curl("http://10.201.0.1/");
    expect(r).toMatchObject({ exitCode: 7, class: "UNREACHABLE", errno: "ENETUNREACH" });
  });

  it("ss -Htln: empty output is zero listeners; a listener is one line", async () => {
    const none = await lab.must(lab.a, ["ss", "-Htln", "sport = :30780"]);
    expect(none.stdout).toBe("");
    expect(parseSs(none.stdout).sockets).toHaveLength(0);
    const listening = await lab.must(lab.b, ["ss", "-Htln", "sport = :8080"]);
    const sockets = parseSs(listening.stdout).sockets;
    expect(sockets).toHaveLength(1);
    expect(sockets[0]).toMatchObject({ state: "LISTEN", local: "0.0.0.0:8080" });
  });

  it("ip route get through a route with a VXLAN-sized MTU (1450 of 1500)", async () => {
    await lab.must(lab.a, [
      "ip",
      "route",
      "add",
      "10.201.0.0/24",
      "dev",
      lab.devA,
      "src",
      lab.ipA,
      "mtu",
      "1450",
    ]);
    const raw = (await lab.must(lab.a, ["ip", "route", "get", "10.201.0.5"])).stdout;
    expect(parseIpRoute(raw).routes[0]).toMatchObject({
      destination: "10.201.0.5",
      dev: lab.devA,
      src: lab.ipA,
      mtu: 1450,
      cached: true,
    });
    const mtu = Number((await lab.must(lab.a, ["cat", `/sys/class/net/${lab.devA}/mtu`])).stdout.trim());
    expect(mtu - 1450).toBe(50);
  });
});
