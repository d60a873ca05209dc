import { UserError } from "../helpers/errors.ts";
import type { UpgradePlan } from "../helpers/observe/context.ts";
import { type Lab, labCilium, labProfile } from "./lab.ts";
import type { Profile } from "./profile.ts";
import { resolveCilium } from "./versions.ts";

/**
 * The upgrade leg: to the next minor (the path Cilium's upgrade guide and CI take: Documentation/operations/upgrade.rst, .github/workflows/tests-e2e-upgrade.yaml), or to a
 * newer patch of the same minor; with `rollback`, then back with `helm rollback` (the guide's way back).
 */
export function planUpgrade(
  p: Profile,
  upgradeTo: string,
  valuesFile: string,
  lab?: Lab,
  rollback = false,
): UpgradePlan {
  const to = lab ? labCilium(lab, upgradeTo) : resolveCilium(upgradeTo);
  const [maj, min] = p.cilium.minor.split(".").map(Number);
  const next = `${maj}.${(min ?? 0) + 1}`;
  const patchOf = (v: string) => Number(v.split(".")[2] ?? -1);
  const patchUpgrade = to.minor === p.cilium.minor && patchOf(to.version) > patchOf(p.cilium.version);
  if (to.minor !== next && !patchUpgrade) {
    throw new UserError(
      `UPGRADE_TO=${upgradeTo}: Cilium supports upgrades to a newer patch of the same minor or to the next minor only; from ${p.cilium.version} that is a ${p.cilium.minor}.x above it or ${next}`,
    );
  }
  const v = p.helmValues as {
    kubeProxyReplacement?: boolean;
    k8sServiceHost?: string;
    k8sServicePort?: number;
  };
  return {
    from: p.cilium.version,
    fromMinor: p.cilium.minor,
    to: to.version,
    toMinor: to.minor,
    valuesFile,
    ...(v.kubeProxyReplacement && v.k8sServiceHost
      ? { k8sServiceHost: v.k8sServiceHost, k8sServicePort: v.k8sServicePort ?? 6443 }
      : {}),
    ...(lab && p.lab ? { lab: labUpgrade(lab, p.cluster, to.version) } : {}),
    ...(rollback ? { rollback: true } : {}),
  };
}

/** The lab's side of an upgrade to `version`: its chart, its images to load, and the values naming them. */
export function labUpgrade(lab: Lab, cluster: string, version: string): NonNullable<UpgradePlan["lab"]> {
  const lp = labProfile(lab, version);
  return {
    chart: lp.chart,
    cluster,
    load: lp.load,
    ...(lp.patch ? { patch: lp.patch } : {}),
    set: [
      `image.override=${lp.ciliumImage}`,
      `operator.image.override=${lp.operatorImage}`,
      `preflight.image.override=${lp.ciliumImage}`,
      "preflight.image.pullPolicy=Never",
      "envoy.enabled=false",
    ],
  };
}
