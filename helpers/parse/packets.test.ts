/**
 * Whose loss a failure is, from every node's capture. The capture lines below are WRITTEN BY US in the format
 * tcpdump 4.99.3 printed for `-i any -nn -tt -S` read back from a pcap (checked 2026-12-07 in two network namespaces
 * of ours joined by a VXLAN device on port 8472: the outer line, then the inner packet on the next line), with the
 * lab's interface names and addresses put in.
 */
import { describe, expect, it } from "vitest";
import { attribute, type Conversation, parseDropLines, parsePackets } from "./packets.ts";

const T = 1796615306;
const at = (s: number) => (T + s).toFixed(6);
const c: Conversation = { clientIp: "10.244.1.5", port: 20001, clientNode: "w1", from: T, to: T + 2 };

const syn = (s: number, iface: string, dir: string) =>
  `${at(s)} ${iface} ${dir} IP 10.244.1.5.20001 > 10.244.2.7.8080: Flags [S], seq 4101089229, win 64860, length 0`;
const synAck = (s: number, iface: string, dir: string) =>
  `${at(s)} ${iface} ${dir} IP 10.244.2.7.8080 > 10.244.1.5.20001: Flags [S.], seq 881577005, ack 4101089230, win 64308, length 0`;
const req = (s: number, iface: string, dir: string) =>
  `${at(s)} ${iface} ${dir} IP 10.244.1.5.20001 > 10.244.2.7.8080: Flags [P.], seq 4101089230:4101089311, ack 881577006, win 64, length 81: HTTP: GET /hostname HTTP/1.1`;
const ans = (s: number, iface: string, dir: string) =>
  `${at(s)} ${iface} ${dir} IP 10.244.2.7.8080 > 10.244.1.5.20001: Flags [P.], seq 881577006:881577162, ack 4101089311, win 63, length 156: HTTP: HTTP/1.1 200 OK`;
const outer = (s: number, dir: string, from: string, to: string, inner: string) =>
  `${at(s)} eth0  ${dir} IP ${from}.53847 > ${to}.8472: OTV, flags [I] (0x08), overlay 0, instance 6\n${inner.slice(inner.indexOf("IP "))}`;

const A = "172.31.100.3";
const B = "172.31.100.4";

describe("attribute: whose loss a failed request is (issue 42)", () => {
  it("reads an encapsulated packet as its inner one, marked outer", () => {
    const ps = parsePackets("w1", outer(0.1, "Out", A, B, req(0.1, "x", "x")), "raw/cap.txt");
    expect(ps).toHaveLength(1);
    expect(ps[0]).toMatchObject({
      iface: "eth0",
      dir: "Out",
      outer: true,
      seq: "4101089230:4101089311",
      length: 81,
    });
    expect(ps[0]?.at).toBe("raw/cap.txt:1");
  });

  it("a request that left the client's node through the tunnel and reached no other node is the datapath's", () => {
    const w1 = [
      syn(0, "lxc1", "In"),
      outer(0, "Out", A, B, syn(0, "", "")),
      outer(0.001, "In", B, A, synAck(0.001, "", "")),
      synAck(0.001, "lxc1", "Out"),
      req(0.01, "lxc1", "In"),
      outer(0.01, "Out", A, B, req(0.01, "", "")),
    ].join("\n");
    const w2 = [outer(0, "In", A, B, syn(0, "", "")), outer(0.001, "Out", B, A, synAck(0.001, "", ""))].join(
      "\n",
    );
    const ps = [...parsePackets("w1", w1), ...parsePackets("w2", w2)];
    const a = attribute(c, ps, [], ["w1", "w2", "cp"], ["w1", "w2", "cp"]);
    expect(a.kind).toBe("datapath");
    expect(a.why).toMatch(/the request left w1 through the tunnel at .* and no other node saw it arrive/);
    // with one node's capture missing, the same silence proves nothing
    expect(attribute(c, ps, [], ["w1", "w2"], ["w1", "w2", "cp"]).kind).toBe("unknown");
  });

  it("an answer held 2 s between the nodes is the datapath's, with both lines", () => {
    const w1 = [
      req(0.01, "lxc1", "In"),
      outer(0.01, "Out", A, B, req(0.01, "", "")),
      outer(2.1, "In", B, A, ans(2.1, "", "")),
      ans(2.1, "lxc1", "Out"),
    ].join("\n");
    const w2 = [
      outer(0.011, "In", A, B, req(0.011, "", "")),
      outer(0.05, "Out", B, A, ans(0.05, "", "")),
    ].join("\n");
    const a = attribute(c, [...parsePackets("w1", w1), ...parsePackets("w2", w2)], [], ["w1", "w2"]);
    expect(a.kind).toBe("datapath");
    expect(a.why).toMatch(/the answer was held 2050 ms between w2 .* and w1/);
    expect(a.lines).toHaveLength(2);
  });

  it("an answer delivered to the client before its timeout is not the datapath's", () => {
    const w1 = [
      req(0.01, "lxc1", "In"),
      outer(0.01, "Out", A, B, req(0.01, "", "")),
      outer(0.06, "In", B, A, ans(0.06, "", "")),
      ans(0.06, "lxc1", "Out"),
    ].join("\n");
    const w2 = [
      outer(0.011, "In", A, B, req(0.011, "", "")),
      outer(0.05, "Out", B, A, ans(0.05, "", "")),
    ].join("\n");
    const a = attribute(c, [...parsePackets("w1", w1), ...parsePackets("w2", w2)], [], ["w1", "w2"]);
    expect(a.kind).toBe("client");
  });

  it("an RST no backend sent, and a drop the monitor saw, are the datapath's", () => {
    const rst = `${at(0.02)} lxc1 Out IP 10.244.2.7.8080 > 10.244.1.5.20001: Flags [R], seq 881577006, win 0, length 0`;
    const w1 = [req(0.01, "lxc1", "In"), rst].join("\n");
    expect(attribute(c, parsePackets("w1", w1), [], ["w1"]).kind).toBe("datapath");
    const drops = parseDropLines(
      "w2",
      `${at(0.5)} xx drop (Stale or unroutable IP) flow 0x0 to endpoint 0, ifindex 5, file bpf_lxc.c:1290, , identity 1234->5678: 10.244.1.5:20001 -> 10.244.2.7:8080 tcp PSH, ACK\n`,
      "raw/drops-w2.txt",
    );
    const a = attribute(c, parsePackets("w1", req(0.01, "lxc1", "In")), drops, ["w1"]);
    expect(a).toMatchObject({ kind: "datapath" });
    expect(a.why).toMatch(/dropped it on w2: xx drop \(Stale or unroutable IP\)/);
    expect(a.lines[0]).toMatch(/^raw\/drops-w2.txt:1 /);
  });

  it("without any packet of it, or without the client's node captured, it cannot tell", () => {
    expect(attribute(c, [], [], ["w1", "w2"]).kind).toBe("unknown");
    expect(attribute(c, parsePackets("w2", req(0.01, "lxc9", "Out")), [], ["w2"]).why).toMatch(
      /no capture on the client's node w1/,
    );
    // a packet outside the failure's window is not this failure's
    expect(attribute(c, parsePackets("w1", req(30, "lxc1", "In")), [], ["w1"]).why).toMatch(/no packet of/);
  });

  it("a request handed to the backend Pod and acknowledged, answered after the client's timeout, is the backend's", () => {
    // the shape run up-119-120-kpr-r1 recorded in its restart leg (request 373, its lines trimmed by us): delivered
    // and acknowledged within microseconds, the answer leaving the backend Pod 2455 ms later
    const w2 = [
      `${at(0.941101)} lxc1 In  IP 10.244.1.5.20001 > 10.244.2.7.8080: Flags [P.], seq 4101089230:4101089311, ack 881577006, win 64, length 81: HTTP: GET /hostname HTTP/1.1`,
      outer(0.941134, "Out", A, B, req(0, "", "")),
    ].join("\n");
    const w1 = [
      outer(0.94115, "In", A, B, req(0, "", "")),
      `${at(0.941169)} lxc9 Out IP 10.244.1.5.20001 > 10.244.2.7.8080: Flags [P.], seq 4101089230:4101089311, ack 881577006, win 64, length 81: HTTP: GET /hostname HTTP/1.1`,
      `${at(0.941175)} lxc9 In  IP 10.244.2.7.8080 > 10.244.1.5.20001: Flags [.], ack 4101089311, win 63, length 0`,
      `${at(3.39674)} lxc9 In  IP 10.244.2.7.8080 > 10.244.1.5.20001: Flags [P.], seq 881577006:881577162, ack 4101089312, win 63, length 156: HTTP: HTTP/1.1 200 OK`,
    ].join("\n");
    const a = attribute(
      { ...c, clientNode: "w2", to: T + 2.95 },
      [...parsePackets("w2", w2), ...parsePackets("w1", w1)],
      [],
      ["w1", "w2"],
    );
    expect(a.kind).toBe("backend");
    expect(a.why).toMatch(
      /handed to the backend Pod on w1 .* its answer left the backend only 2456 ms later, after the client's timeout/,
    );
    expect(a.lines).toHaveLength(3);
  });
});
