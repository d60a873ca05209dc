import { describe, expect, it } from "vitest";
import type { ExecRequest, ExecResult } from "../helpers/exec/types.ts";
import { COREDNS_PATCH, coreDnsProbeEverySecond } from "./coredns.ts";

function ctx(result: Pick<ExecResult, "exitCode" | "stderr">) {
  const calls: ExecRequest[] = [];
  const lines: string[] = [];
  const g = {
    exec: {
      run: async (req: ExecRequest): Promise<ExecResult> => {
        calls.push(req);
        return { stdout: "", durationMs: 1, ...result };
      },
    },
    log: (l: string) => lines.push(l),
    sleep: async () => {},
  };
  return { g, calls, lines };
}

describe("coreDnsProbeEverySecond", () => {
  it("patches kubeadm's CoreDNS Deployment: the probe's period only, after testing the container's name", async () => {
    const { g, calls, lines } = ctx({ exitCode: 0, stderr: "" });
    expect(await coreDnsProbeEverySecond(g)).toBe(true);
    expect(calls.map((c) => [c.target.kind, ...c.argv].join(" "))).toEqual([
      `kubectl -n kube-system patch deployment coredns --type=json -p ${COREDNS_PATCH}`,
    ]);
    expect(JSON.parse(COREDNS_PATCH)).toEqual([
      { op: "test", path: "/spec/template/spec/containers/0/name", value: "coredns" },
      { op: "replace", path: "/spec/template/spec/containers/0/readinessProbe/periodSeconds", value: 1 },
    ]);
    expect(lines).toEqual([]);
  });

  it("a cluster whose CoreDNS is not kubeadm's: one line, nothing else", async () => {
    const { g, lines } = ctx({
      exitCode: 1,
      stderr:
        "The request is invalid: the server rejected our request due to an error in our request\nmore\n",
    });
    expect(await coreDnsProbeEverySecond(g)).toBe(false);
    expect(lines).toEqual([
      "CoreDNS's readiness probe left as it is (The request is invalid: the server rejected our request due to an error in our request): kube-dns may get its backends up to 10 s later",
    ]);
  });
});
