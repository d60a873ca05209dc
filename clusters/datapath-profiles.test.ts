import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UserError } from "../helpers/errors.ts";
import {
  DATAPATH_PROFILES,
  datapathProfile,
  formatOverridden,
  kernelRefusal,
  loadUserValues,
  mergeUserValues,
  PROFILES,
  parseDatapathProfile,
  userValuesFile,
} from "./datapath-profiles.ts";
import { assertRunnable, formatPlan, helmValues, makeProfile } from "./profile.ts";

/** Kernel configs WRITTEN BY US in /proc/config.gz's layout: this lab machine's relevant lines, and a full one. */
const LAB_KERNEL =
  "CONFIG_VXLAN=y\n# CONFIG_GENEVE is not set\n# CONFIG_NETKIT is not set\n# CONFIG_IP_VS is not set\n";
const FULL_KERNEL = "CONFIG_VXLAN=y\nCONFIG_GENEVE=m\nCONFIG_NETKIT=y\nCONFIG_IP_VS=m\n";

describe("datapath profiles", () => {
  it("every profile is declared with a description, modes, sources and what the record must show", () => {
    for (const name of DATAPATH_PROFILES) {
      const p = PROFILES[name];
      expect(p.name).toBe(name);
      expect(p.description.length).toBeGreaterThan(20);
      expect(p.modes.length).toBeGreaterThan(0);
      expect(p.sources.length).toBeGreaterThan(0);
      for (const m of p.modes) expect(Object.keys(p.expect(m)).length).toBeGreaterThan(0);
    }
  });

  it("a profile outside its modes, or an unknown name, is refused in one line", () => {
    expect(() => datapathProfile("kp-nftables", "kpr")).toThrow(
      new UserError("datapath profile kp-nftables applies to kube-proxy only (not kpr)"),
    );
    expect(() => parseDatapathProfile("geneve")).toThrow(
      /^unknown datapath profile "geneve"; valid: tunnel, native-bpf/,
    );
    expect(parseDatapathProfile(undefined)).toBeUndefined();
  });

  it("native-bpf: native routing everywhere, the BPF parts only with KPR (they fall back beside kube-proxy)", () => {
    expect(PROFILES["native-bpf"].helm("kpr")).toEqual({
      routingMode: "native",
      autoDirectNodeRoutes: true,
      ipv4NativeRoutingCIDR: "10.244.0.0/16",
      bpf: { masquerade: true, hostLegacyRouting: false },
    });
    expect(PROFILES["native-bpf"].helm("kube-proxy")).not.toHaveProperty("bpf");
    expect(PROFILES["native-bpf"].expect("kube-proxy")).toMatchObject({ hostRouting: "legacy" });
  });

  it("dsr-maglev never uses the vxlan tunnel (Cilium refuses DSR with vxlan)", () => {
    const v = PROFILES["dsr-maglev"].helm("kpr");
    expect(v).toMatchObject({ routingMode: "native", loadBalancer: { mode: "dsr", algorithm: "maglev" } });
  });

  it("the kernel decides netkit and kp-ipvs: refused here in one line, allowed on a kernel that has them", () => {
    expect(kernelRefusal(PROFILES.netkit, LAB_KERNEL)).toBe(
      "netkit needs a kernel with CONFIG_NETKIT; this machine's kernel lacks it",
    );
    expect(kernelRefusal(PROFILES["kp-ipvs"], LAB_KERNEL)).toMatch(
      /^kube-proxy's ipvs mode needs a kernel with CONFIG_IP_VS/,
    );
    expect(kernelRefusal(PROFILES.netkit, FULL_KERNEL)).toBeNull();
    expect(kernelRefusal(PROFILES["kp-ipvs"], FULL_KERNEL)).toBeNull();
    expect(kernelRefusal(PROFILES["kp-nftables"], LAB_KERNEL)).toBeNull();
    // no readable kernel config: cannot tell, so no refusal
    expect(kernelRefusal(PROFILES.netkit, null)).toBeNull();
  });
});

describe("profiles through makeProfile (the hook in clusters/profile.ts)", () => {
  it("no datapath profile: exactly today's values and kind config", () => {
    const p = makeProfile({ provider: "kind", mode: "kpr", cilium: "1.20" });
    expect(p.helmValues).toEqual(helmValues("kind", "kpr", "cdc-kpr", false));
    expect(p.datapath).toBeUndefined();
  });

  it("kind: the profile's values over the suite's, its networking into the kind config", () => {
    const p = makeProfile({ provider: "kind", mode: "kube-proxy", cilium: "1.20", datapath: "dual-stack" });
    expect(p.helmValues).toMatchObject({
      kubeProxyReplacement: false,
      routingMode: "tunnel",
      ipv6: { enabled: true },
    });
    expect(p.kindConfig?.networking).toEqual({
      disableDefaultCNI: true,
      kubeProxyMode: "iptables",
      ipFamily: "dual",
      podSubnet: "10.244.0.0/16,fd00:10:244::/56",
      serviceSubnet: "10.96.0.0/16,fd00:10:96::/112",
    });
    const nft = makeProfile({
      provider: "kind",
      mode: "kube-proxy",
      cilium: "1.20",
      datapath: "kp-nftables",
    });
    expect(nft.kindConfig?.networking).toMatchObject({ kubeProxyMode: "nftables" });
  });

  it("k3d: the profile's k3s args before --wait; a profile not declared for k3d is refused", () => {
    const p = makeProfile({ provider: "k3d", mode: "kube-proxy", cilium: "1.20", datapath: "kp-nftables" });
    expect(p.k3dArgs?.slice(-5)).toEqual([
      "--k3s-arg",
      "--kube-proxy-arg=proxy-mode=nftables@server:*",
      "--k3s-arg",
      "--kube-proxy-arg=proxy-mode=nftables@agent:*",
      "--wait",
    ]);
    expect(() =>
      makeProfile({ provider: "k3d", mode: "kpr", cilium: "1.20", datapath: "dual-stack" }),
    ).toThrow(/^datapath profile dual-stack is not declared for k3d/);
  });

  it("netkit on this lab's kernel: planned, but the run refuses it with the one line", () => {
    const p = makeProfile({
      provider: "kind",
      mode: "kpr",
      cilium: "1.20",
      datapath: "netkit",
      kernelConfig: LAB_KERNEL,
    });
    expect(p.helmValues).toMatchObject({ bpf: { datapathMode: "netkit" } });
    expect(() => assertRunnable(p)).toThrow(
      new UserError("netkit needs a kernel with CONFIG_NETKIT; this machine's kernel lacks it"),
    );
    expect(formatPlan(p)).toContain("# refused on this machine: netkit needs a kernel with CONFIG_NETKIT");
    const ok = makeProfile({
      provider: "kind",
      mode: "kpr",
      cilium: "1.20",
      datapath: "netkit",
      kernelConfig: FULL_KERNEL,
    });
    expect(() => assertRunnable(ok)).not.toThrow();
  });
});

describe("the user's values, under the suite's", () => {
  it("user keys the suite does not set stay; keys it sets are overridden and listed", () => {
    const { values, overridden } = mergeUserValues(
      {
        routingMode: "native",
        hubble: { relay: { enabled: true } },
        bpf: { masquerade: true, monitorAggregation: "none" },
        kubeProxyReplacement: true,
        operator: { replicas: 1 },
      },
      {
        routingMode: "tunnel",
        bpf: { masquerade: false },
        kubeProxyReplacement: true,
        operator: { replicas: 1 },
      },
    );
    expect(values).toEqual({
      routingMode: "tunnel",
      hubble: { relay: { enabled: true } },
      bpf: { masquerade: false, monitorAggregation: "none" },
      kubeProxyReplacement: true,
      operator: { replicas: 1 },
    });
    // the same value is not an override
    expect(overridden).toEqual(["bpf.masquerade", "routingMode"]);
    expect(formatOverridden("my.yaml", overridden)).toBe(
      "values my.yaml: merged under the suite's; the suite overrode bpf.masquerade, routingMode",
    );
  });

  it("through makeProfile: recorded with the keys overridden, shown by plan", () => {
    const p = makeProfile({
      provider: "kind",
      mode: "kpr",
      cilium: "1.20",
      datapath: "socketlb-hostns",
      userValues: {
        file: "u.yaml",
        values: { socketLB: { hostNamespaceOnly: false }, debug: { enabled: true } },
      },
    });
    expect(p.helmValues).toMatchObject({ socketLB: { hostNamespaceOnly: true }, debug: { enabled: true } });
    expect(p.userValues).toEqual({ file: "u.yaml", overridden: ["socketLB.hostNamespaceOnly"] });
    expect(formatPlan(p)).toContain(
      "# values u.yaml: merged under the suite's; the suite overrode socketLB.hostNamespaceOnly",
    );
  });

  it("reading the file: YAML mapping, or one line saying what is wrong", () => {
    const dir = mkdtempSync(join(tmpdir(), "cdc-values-"));
    const good = join(dir, "good.yaml");
    writeFileSync(good, "routingMode: native\nbpf:\n  masquerade: true\n");
    expect(loadUserValues(good)).toEqual({ routingMode: "native", bpf: { masquerade: true } });
    const empty = join(dir, "empty.yaml");
    writeFileSync(empty, "# nothing\n");
    expect(loadUserValues(empty)).toEqual({});
    const list = join(dir, "list.yaml");
    writeFileSync(list, "- a\n- b\n");
    expect(() => loadUserValues(list)).toThrow(
      /^values file .*list\.yaml: expected a mapping of Helm values at the top$/,
    );
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "a: [1, 2\n");
    expect(() => loadUserValues(bad)).toThrow(/^values file .*bad\.yaml: not YAML \(/);
    expect(() => loadUserValues(join(dir, "missing.yaml"))).toThrow(/missing\.yaml: ENOENT$/);
    expect(userValuesFile({ CILIUM_VALUES: good })).toBe(good);
    expect(userValuesFile({})).toBeUndefined();
  });
});
