import { createSocket } from "node:dgram";
import { describe, expect, it } from "vitest";
import { dnsQuery, hostDnsScript } from "./dns.ts";

describe("host DNS query", () => {
  it("builds an RFC 1035 A query", () => {
    const q = dnsQuery("kubernetes.default.svc.cluster.local", 0x1234);
    expect([...q.subarray(0, 12)]).toEqual([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    expect(q.subarray(12, 23).toString("latin1")).toBe("\x0akubernetes");
    expect([...q.subarray(-4)]).toEqual([0, 1, 0, 1]);
  });

  it("the bash script really sends it over UDP and sees an answer (loopback responder)", async () => {
    const server = createSocket("udp4");
    const got: Buffer[] = [];
    server.on("message", (msg, rinfo) => {
      got.push(msg);
      server.send(
        Buffer.concat([msg.subarray(0, 2), Buffer.from([0x81, 0x80]), msg.subarray(4)]),
        rinfo.port,
        rinfo.address,
      );
    });
    await new Promise<void>((r) => server.bind(0, "127.0.0.1", () => r()));
    const port = (server.address() as { port: number }).port;
    const { execa } = await import("execa");
    const script = hostDnsScript("127.0.0.1", "kubernetes.default.svc.cluster.local", 7).replace(
      "/53 ",
      `/${port} `,
    );
    const r = await execa("bash", ["-c", script], { reject: false });
    server.close();
    expect(r.stdout.trim()).toBe("answered");
    expect(got[0]?.equals(dnsQuery("kubernetes.default.svc.cluster.local", 7))).toBe(true);
  });
});
