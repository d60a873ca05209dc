import { describe, expect, it } from "vitest";
import { TOPICS } from "../../suites/topics.ts";
import { checkBundle } from "../check.ts";
import type { Verdict } from "../properties/judge.ts";
import { shipped } from "../testing/tamper.ts";
import { describePath, type TranslationPath, translationPaths, translationSvg } from "./picture.ts";

const svgOf = (label: string, paths: TranslationPath[]) => translationSvg(label, paths).text;

const verdicts = async (bundle: string) => (await checkBundle(shipped(bundle), TOPICS)).verdicts;
const lookup = (vs: Verdict[]) => (id: string) => vs.find((v) => v.id === id);
const places = (ps: TranslationPath[]) => Object.fromEntries(ps.map((p) => [p.key, `${p.at} ${p.status}`]));
/** The same verdicts with some observed values (and statuses) changed. */
const changed = (vs: Verdict[], edits: Record<string, Partial<Verdict>>) =>
  vs.map((v) => (edits[v.id] ? { ...v, ...edits[v.id] } : v));
/** What the SVG draws per path: `key at status`, read back from its data attributes. */
const drawn = (svg: string) =>
  [...svg.matchAll(/data-path="(\w+)" data-at="(\w+)" data-status="(\w+)"/g)].map(
    (m) => `${m[1]} ${m[2]} ${m[3]}`,
  );

describe("the picture of where the Service was translated", () => {
  it("kpr: a Pod's and a host's connections at the socket hook, the NodePort at a tc program", async () => {
    const ps = translationPaths(lookup(await verdicts("kpr")));
    expect(places(ps)).toEqual({ pod: "socket pass", host: "socket pass", nodeport: "tc pass" });
    expect(ps[0]?.because).toEqual(["holder.socket-peer = backend", "program.socket-lb-hooks = 4"]);
  });

  it("kube-proxy: a Pod's packets at a tc program (bpf_lxc), a host's and the NodePort in iptables", async () => {
    const ps = translationPaths(lookup(await verdicts("kube-proxy")));
    expect(places(ps)).toEqual({ pod: "tc pass", host: "iptables pass", nodeport: "iptables pass" });
    expect(ps.map(describePath)).toEqual([
      "Pod → ClusterIP: translated at a tc program",
      "host → ClusterIP: translated at iptables",
      "outside → NodePort: translated at iptables",
    ]);
  });

  it("is drawn from the verdicts: change them and the dot moves, a failure turns red", async () => {
    const vs = await verdicts("kpr");
    const before = svgOf("kpr", translationPaths(lookup(vs)));
    expect(drawn(before)).toEqual(["pod socket pass", "host socket pass", "nodeport tc pass"]);
    // the holder's socket at the ClusterIP and kube-proxy's counter moving for a Pod's queries: iptables
    const moved = changed(vs, {
      "holder.socket-peer": { observed: "cluster-ip", status: "fail" },
      "translation.pod-by-ebpf": { observed: "iptables (counter +5)", status: "fail" },
    });
    const after = svgOf("kpr", translationPaths(lookup(moved)));
    expect(after).not.toBe(before);
    expect(drawn(after)).toEqual(["pod iptables fail", "host socket pass", "nodeport tc pass"]);
    expect(after).toContain("✘");
    expect(after).toContain('aria-label="kpr: Pod → ClusterIP: translated at iptables (a verdict failed);');
    // no NodePort frontends in the LB map, kube-proxy's rules instead
    const np = changed(vs, {
      "nodeport.bpf-frontends": { observed: "0" },
      "nodeport.iptables-lines": { observed: "2" },
    });
    expect(drawn(svgOf("kpr", translationPaths(lookup(np))))).toContain("nodeport iptables pass");
  });

  it("a bundle without those topics places nothing, and says so", async () => {
    const ps = translationPaths(lookup(await verdicts("drop-kpr")));
    expect(places(ps)).toEqual({ pod: "null skip", host: "null skip", nodeport: "null skip" });
    expect(drawn(svgOf("drop", ps))).toEqual(["pod none skip", "host none skip", "nodeport none skip"]);
  });
});
