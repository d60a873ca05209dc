/**
 * CoreDNS's readiness probe asked every second on a cluster the suite created. kubeadm's CoreDNS Deployment probes
 * `/ready` every 10 s, and a CoreDNS Pod is not ready at its first probe (its kubernetes plugin is still listing
 * the API), so kube-dns got its backends 10 s after CoreDNS could answer: on the lab, "Cilium ready" ended 10–18 s
 * after the agents' own start for that wait alone. Only the probe's period changes (kubelet's, not the datapath's);
 * the Deployment's new Pods are the ones the gates restart once the agents are OK (readiness.ts). A JSON patch that
 * first tests the container's name, so another cluster's CoreDNS is left as it is; already every second, the patch
 * changes nothing and rolls nothing.
 */
import type { GateContext } from "./readiness.ts";

export const COREDNS_PATCH = JSON.stringify([
  { op: "test", path: "/spec/template/spec/containers/0/name", value: "coredns" },
  { op: "replace", path: "/spec/template/spec/containers/0/readinessProbe/periodSeconds", value: 1 },
]);

/** Patches kube-system/coredns; a cluster without it (or with another layout) is said in one line and left. */
export async function coreDnsProbeEverySecond(g: GateContext): Promise<boolean> {
  const r = await g.exec.run({
    target: { kind: "kubectl" },
    argv: ["-n", "kube-system", "patch", "deployment", "coredns", "--type=json", "-p", COREDNS_PATCH],
  });
  if (r.exitCode === 0) return true;
  g.log(
    `CoreDNS's readiness probe left as it is (${(r.stderr || r.stdout).trim().split("\n")[0] ?? ""}): kube-dns may get its backends up to 10 s later`,
  );
  return false;
}
