import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MODES } from "../helpers/properties/expectation.ts";
import { formatPlan, helmValues, k3dArgs, kindConfig, makeProfile, parseProvider } from "./profile.ts";
import { CILIUM_MINORS, resolveCilium } from "./versions.ts";

describe("plan snapshots: every provider × mode × Cilium minor", () => {
  for (const provider of ["kind", "k3d", "existing"] as const) {
    for (const mode of MODES) {
      for (const minor of CILIUM_MINORS) {
        it(`${provider} × ${mode} × ${minor}`, async () => {
          const text = formatPlan(makeProfile({ provider, mode, cilium: minor }));
          await expect(text).toMatchFileSnapshot(
            join("__snapshots__", `plan-${provider}-${mode}-${minor}.txt`),
          );
        });
      }
    }
  }
});

describe("profiles", () => {
  it("kind: 1 control-plane + 2 workers, no default CNI, kube-proxy mode per mode", () => {
    expect(kindConfig("kpr", "x").networking).toMatchObject({
      disableDefaultCNI: true,
      kubeProxyMode: "none",
    });
    expect(kindConfig("kube-proxy", "x").networking).toMatchObject({ kubeProxyMode: "iptables" });
    expect(kindConfig("kpr", "x").nodes).toEqual([
      { role: "control-plane" },
      { role: "worker" },
      { role: "worker" },
    ]);
  });

  it("k3d: --disable-kube-proxy only for kpr; flannel, network policy, traefik and servicelb off", () => {
    const kpr = k3dArgs("kpr", "c").join(" ");
    const kp = k3dArgs("kube-proxy", "c").join(" ");
    for (const a of [
      "--flannel-backend=none@server:*",
      "--disable-network-policy@server:*",
      "--disable=traefik@server:*",
      "--disable=servicelb@server:*",
      "--agents 2",
    ]) {
      expect(kpr).toContain(a);
      expect(kp).toContain(a);
    }
    expect(kpr).toContain("--disable-kube-proxy@server:*");
    expect(kp).not.toContain("--disable-kube-proxy");
  });

  it("helm values: API server per provider, KPR per mode, digests only dropped when images are preloaded", () => {
    expect(helmValues("kind", "kpr", "cdc-kpr", false)).toMatchObject({
      kubeProxyReplacement: true,
      k8sServiceHost: "cdc-kpr-control-plane",
      k8sServicePort: 6443,
      ipam: { mode: "kubernetes" },
      operator: { replicas: 1 },
    });
    expect(helmValues("k3d", "kube-proxy", "c", false)).toMatchObject({
      kubeProxyReplacement: false,
      k8sServiceHost: "127.0.0.1",
      k8sServicePort: 6444,
      socketLB: { enabled: false },
    });
    expect(helmValues("kind", "kpr", "c", false)).not.toHaveProperty("image");
    expect(helmValues("kind", "kpr", "c", true)).toMatchObject({
      image: { useDigest: false },
      operator: { image: { useDigest: false } },
    });
  });

  it("Cilium versions: minor → pinned patch, patch kept, others rejected listing the valid ones", () => {
    expect(resolveCilium(undefined)).toEqual({ version: "1.20.2", minor: "1.20" });
    expect(resolveCilium("1.19")).toEqual({ version: "1.19.7", minor: "1.19" });
    expect(resolveCilium("v1.18.14")).toEqual({ version: "1.18.14", minor: "1.18" });
    expect(() => resolveCilium("1.16")).toThrowError(
      /^Cilium 1\.16 is older than every minor the suite declares \(oldest: 1\.18\): refused, .*; valid: 1\.18, 1\.19, 1\.20, /,
    );
    expect(() => resolveCilium("1.19.x")).toThrowError(
      /^unsupported Cilium version "1\.19\.x"; valid: 1\.18, 1\.19, 1\.20, /,
    );
    expect(() => parseProvider("minikube")).toThrowError(
      /unknown provider "minikube"; valid: kind, k3d, existing, replay, none/,
    );
  });
});

describe("upgrade plan", () => {
  it("goes to the next minor or a newer patch of the same minor, with the run's full values and the API server for the KPR preflight", async () => {
    const { planUpgrade } = await import("./lifecycle.ts");
    const p = makeProfile({ provider: "kind", mode: "kpr", cilium: "1.19" });
    expect(planUpgrade(p, "1.20", "/r/cilium-values.yaml")).toEqual({
      from: p.cilium.version,
      fromMinor: "1.19",
      to: "1.20.2",
      toMinor: "1.20",
      valuesFile: "/r/cilium-values.yaml",
      k8sServiceHost: "cdc-kpr-control-plane",
      k8sServicePort: 6443,
    });
    // 1.19 resolves to the pinned 1.19 patch, which is where the profile already is
    expect(() => planUpgrade(p, "1.19", "v")).toThrowError(
      /a newer patch of the same minor or to the next minor only; from 1\.19\.\d+ that is a 1\.19\.x above it or 1\.20/,
    );
    const older = makeProfile({ provider: "kind", mode: "kube-proxy", cilium: "1.19.6" });
    expect(planUpgrade(older, "1.19.7", "v", undefined, true)).toMatchObject({
      from: "1.19.6",
      fromMinor: "1.19",
      rollback: true,
      to: "1.19.7",
      toMinor: "1.19",
    });
    expect(() => planUpgrade(older, "1.19.5", "v")).toThrowError(/a 1\.19\.x above it/);
    expect(() =>
      planUpgrade(makeProfile({ provider: "kind", mode: "kube-proxy", cilium: "1.18" }), "1.20", "v"),
    ).toThrowError(/from 1\.18\.\d+ that is a 1\.18\.x above it or 1\.19/);
    expect(
      planUpgrade(makeProfile({ provider: "kind", mode: "kube-proxy", cilium: "1.18" }), "1.19.2", "v"),
    ).not.toHaveProperty("k8sServiceHost");
  });
});
