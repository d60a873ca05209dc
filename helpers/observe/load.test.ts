import { describe, expect, it } from "vitest";
import { RawText } from "../records/evidence.ts";
import { foldMapNames } from "./leg-agents.ts";
import { packetsOf, whereItDied } from "./leg-traffic.ts";

// written by us, in the form tcpdump 4.99 prints with `-i any -nn -tt` (seen on the lab's tools image: the time, the
// interface, In/Out, then the packet): the request loop's Pod is 10.244.1.7, its request bound to port 20002
const IP = "10.244.1.7";
const line = (dev: string, dir: string, pkt: string) =>
  `1796517811.540266 ${dev.padEnd(5)} ${dir.padEnd(3)} IP ${pkt}`;
const SYN_IN = line(
  "lxc4f1e2d",
  "In",
  `${IP}.20002 > 10.244.2.9.8080: Flags [S], seq 1, win 64240, length 0`,
);
const SYN_WIRE = line(
  "cilium_vxlan",
  "Out",
  `${IP}.20002 > 10.244.2.9.8080: Flags [S], seq 1, win 64240, length 0`,
);
const SYNACK_WIRE = line(
  "cilium_vxlan",
  "In",
  `10.244.2.9.8080 > ${IP}.20002: Flags [S.], seq 9, ack 2, length 0`,
);
const SYNACK_POD = line(
  "lxc4f1e2d",
  "Out",
  `10.244.2.9.8080 > ${IP}.20002: Flags [S.], seq 9, ack 2, length 0`,
);
const OTHER = line("lxc4f1e2d", "In", `${IP}.20003 > 10.244.2.9.8080: Flags [S], seq 1, length 0`);

describe("where a failed request's packets died on the loop's node (issue 35)", () => {
  it("finds the request's packets by its local port, both ways", () => {
    const raw = RawText.of([SYN_IN, OTHER, SYNACK_POD].join("\n"), {
      file: "raw/upgrade/070-logs-capture.txt",
    });
    expect(packetsOf(raw, IP, 20002).map((q) => q.at.line)).toEqual([1, 3]);
  });

  it.each([
    [[], /never left the client Pod/],
    [[SYN_IN], /dropped on the loop's own node/],
    [[SYN_IN, SYN_WIRE], /no answer came back/],
    [[SYN_IN, SYN_WIRE, SYNACK_WIRE], /not delivered to the client Pod/],
    [[SYN_IN, SYN_WIRE, SYNACK_WIRE, SYNACK_POD], /the datapath did its part, the client did not take it/],
    [
      [SYN_IN, line("lxc4f1e2d", "Out", `10.244.2.9.8080 > ${IP}.20002: Flags [R.], seq 0, ack 2, length 0`)],
      /reset by the other end/,
    ],
    // as recorded in run up-119-120-kpr-b: the handshake done, the client's FIN at its timeout, then its RST
    [
      [
        SYN_IN,
        SYN_WIRE,
        SYNACK_WIRE,
        SYNACK_POD,
        line("lxc4f1e2d", "In", `${IP}.20002 > 10.244.2.9.8080: Flags [F.], seq 72, ack 1, length 0`),
        line("lxc4f1e2d", "In", `${IP}.20002 > 10.244.2.9.8080: Flags [R], seq 73, length 0`),
      ],
      /the handshake completed .* lost after the handshake/,
    ],
  ])("%j", (lines, words) => {
    expect(whereItDied(lines, IP, 20002)).toMatch(words);
  });
});

describe("pinned maps, per-endpoint numbers folded", () => {
  it("folds endpoint ids and keeps the rest sorted and unique", () => {
    expect(
      foldMapNames(
        "cilium_policy_v2_01234\ncilium_policy_v2_00042\ncilium_lb4_services_v2\ncilium_calls_00042\n\n",
      ),
    ).toEqual(["cilium_calls_<id>", "cilium_lb4_services_v2", "cilium_policy_v2_<id>"]);
  });
});
