import { describe, expect, it } from "vitest";
import { parseBindProbe } from "./bind-probe.ts";
import { parseBpfLbBackends } from "./bpf-lb-backends.ts";
import { hookOf, parseBpftoolCgroup } from "./bpftool-cgroup.ts";

describe("bpftool cgroup show (fixtures written by us)", () => {
  it("newer attach type names, empty flags, full names", () => {
    const r = parseBpftoolCgroup(
      [
        "ID       AttachType      AttachFlags     Name",
        "1655     cgroup_inet4_connect                 cil_sock4_connect",
        "1656     cgroup_inet4_getpeername                 cil_sock4_getpeername",
        "1657     cgroup_udp4_recvmsg     multi           cil_sock4_recvmsg",
      ].join("\n"),
    );
    expect(r.attachments.map((a) => [a.hook, a.flags, a.name])).toEqual([
      ["connect4", null, "cil_sock4_connect"],
      ["getpeername4", null, "cil_sock4_getpeername"],
      ["recvmsg4", "multi", "cil_sock4_recvmsg"],
    ]);
  });

  it("older names and truncated program names; nothing attached is an empty list", () => {
    const r = parseBpftoolCgroup(
      "ID       AttachType      AttachFlags     Name\n77       connect4                        cil_sock4_conne\n",
    );
    expect(r.attachments[0]).toMatchObject({ hook: "connect4", name: "cil_sock4_conne" });
    expect(parseBpftoolCgroup("").attachments).toEqual([]);
    expect(hookOf("cgroup_inet6_post_bind")).toBe("post_bind6");
  });

  it("a row it cannot read names the line", () => {
    expect(() => parseBpftoolCgroup("ID AttachType\nnot a row")).toThrowError(/^bpftool-cgroup: line 2: /);
  });
});

describe("bpf lb list --backends (fixtures written by us, knowledge output-formats.md §2)", () => {
  it("ids and addresses, with or without protocol and zone", () => {
    const r = parseBpfLbBackends(
      [
        "ID   BACKEND ADDRESS (REVNAT_ID) (SLOT)",
        "13   TCP://10.244.1.174",
        "7    UDP://10.244.0.12",
        "21   TCP://[fd00::5] [zone-a]",
        "3    10.244.2.9",
      ].join("\n"),
    );
    expect(r.backends).toEqual([
      { id: 13, protocol: "TCP", address: "10.244.1.174", zone: null, line: 2 },
      { id: 7, protocol: "UDP", address: "10.244.0.12", zone: null, line: 3 },
      { id: 21, protocol: "TCP", address: "fd00::5", zone: "zone-a", line: 4 },
      { id: 3, protocol: null, address: "10.244.2.9", zone: null, line: 5 },
    ]);
  });
});

describe("our bind probe", () => {
  it("refused by a socket hook: EADDRINUSE at once (netcat-openbsd and busybox wording)", () => {
    expect(parseBindProbe("nc: Address already in use\nexit=1\n")).toMatchObject({
      result: "EADDRINUSE",
      exitCode: 1,
    });
    expect(parseBindProbe("nc: bind: Address in use\nexit=1\n").result).toBe("EADDRINUSE");
  });
  it("free to bind: nc listens until timeout ends it", () => {
    expect(parseBindProbe("exit=124\n")).toMatchObject({ result: "bound", exitCode: 124 });
  });
  it("anything else is an error with the output kept", () => {
    expect(parseBindProbe("sh: nc: not found\nexit=127\n")).toMatchObject({
      result: "error",
      line: "sh: nc: not found | exit=127",
    });
  });
});
