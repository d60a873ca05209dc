import { UserError } from "../helpers/errors.ts";
import type { Executor } from "../helpers/exec/types.ts";
import { which } from "../helpers/which.ts";
import type { Provider } from "./profile.ts";
import { K3D, KIND } from "./versions.ts";

/** The binaries each provider needs, with what to install when one is missing. */
export const NEEDS: Record<Provider, { bin: string; install: string }[]> = {
  kind: [
    { bin: "docker", install: "Docker (client and a running daemon)" },
    { bin: "kind", install: `kind ${KIND.version}` },
    { bin: "helm", install: "helm ≥ 3.8 (OCI charts)" },
    { bin: "kubectl", install: "kubectl" },
  ],
  k3d: [
    { bin: "docker", install: "Docker (client and a running daemon)" },
    { bin: "k3d", install: `k3d ${K3D.version} (≥ v5.6.1)` },
    { bin: "helm", install: "helm ≥ 3.8 (OCI charts)" },
    { bin: "kubectl", install: "kubectl" },
  ],
  existing: [{ bin: "kubectl", install: "kubectl" }],
  replay: [],
};

/** Throws one line naming every missing binary and what to install. */
export function checkBinaries(provider: Provider, path?: string): void {
  const missing = NEEDS[provider].filter((n) => which(n.bin, path) === null);
  if (missing.length > 0) {
    throw new UserError(
      `CLUSTER_PROVIDER=${provider} needs ${missing.map((m) => m.bin).join(", ")} on PATH; install ${missing.map((m) => m.install).join("; ")}`,
    );
  }
}

/** Whether a Docker daemon answers within `timeoutMs` (the client alone is not enough). */
export async function dockerReachable(
  exec: Executor,
  timeoutMs = 10_000,
): Promise<{ ok: boolean; why: string }> {
  if (!which("docker")) return { ok: false, why: "no docker binary on PATH" };
  const r = await exec.run({
    target: { kind: "local" },
    argv: ["docker", "info", "--format", "{{.ServerVersion}}"],
    timeoutMs,
  });
  if (r.exitCode === 0 && r.stdout.trim() !== "") return { ok: true, why: `Docker ${r.stdout.trim()}` };
  const err = (r.stderr.trim().split("\n").pop() ?? "").slice(0, 160);
  return { ok: false, why: `no Docker daemon reachable (${err || `docker info exited ${r.exitCode}`})` };
}
