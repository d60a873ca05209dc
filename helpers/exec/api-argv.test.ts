import { describe, expect, it } from "vitest";
import {
  API_BULK_APPLY,
  apiBulkDelete,
  apiGet,
  apiPath,
  apiResource,
  apiWatch,
  itemsOf,
  kubectlEquivalent,
  parseApiArgv,
} from "./api-argv.ts";

describe("the api target's pseudo-commands", () => {
  it("read like the kubectl command for the same question, and parse back to the request", () => {
    const get = apiGet({ resource: "pods", namespace: "cca-dp", selector: "app=web" });
    expect(get).toEqual(["get", "pods", "-n", "cca-dp", "-l", "app=web"]);
    expect(parseApiArgv(get)).toEqual({
      verb: "get",
      resource: "pods",
      namespace: "cca-dp",
      selector: "app=web",
    });
    const watch = apiWatch({ resource: "pod", name: "holder", namespace: "cca-dp", until: "Ready" });
    expect(watch).toEqual(["watch", "pod", "holder", "-n", "cca-dp", "--until", "Ready"]);
    expect(parseApiArgv(watch)).toEqual({
      verb: "watch",
      resource: "pod",
      name: "holder",
      namespace: "cca-dp",
      until: "Ready",
    });
    expect(parseApiArgv(API_BULK_APPLY)).toEqual({ verb: "bulk-apply" });
    expect(
      parseApiArgv(apiBulkDelete(["services", "endpointslices"], "cca-dp", "dpc-measure=scale")),
    ).toEqual({
      verb: "bulk-delete",
      resources: ["services", "endpointslices"],
      namespace: "cca-dp",
      selector: "dpc-measure=scale",
    });
    expect(parseApiArgv(apiGet({ resource: "nodes" }))).toEqual({ verb: "get", resource: "nodes" });
  });

  it("anything else is one error naming what is wrong", () => {
    expect(() => parseApiArgv(["list", "pods"])).toThrow(
      /the verbs are get, watch, bulk-apply and bulk-delete/,
    );
    expect(() => parseApiArgv(["watch", "pods", "-n", "x"])).toThrow(/watch needs --until/);
    expect(() => parseApiArgv(["get", "pods", "-n", "x", "--until", "y"])).toThrow(
      /--until belongs to watch/,
    );
    expect(() => parseApiArgv(["get", "pods", "-n"])).toThrow(/-n needs a value/);
    expect(() => parseApiArgv(["get", "pods", "-n", "a", "-n", "b"])).toThrow(/-n given twice/);
    expect(() => parseApiArgv(["get", "pods", "-o", "json", "-n", "x"])).toThrow(/unknown option -o/);
    expect(() => parseApiArgv(["bulk-apply", "-f", "-"])).toThrow(/bulk-apply takes --server-side -f -/);
    expect(() => parseApiArgv(["bulk-delete", "services", "-n", "x"])).toThrow(/bulk-delete takes/);
  });

  it("resources by any of kubectl's names, with their paths", () => {
    expect(apiResource("ciliumendpoints.cilium.io").plural).toBe("ciliumendpoints");
    expect(apiResource("ds").kind).toBe("DaemonSet");
    expect(apiPath(apiResource("deployment"), "kube-system", "cilium-operator")).toBe(
      "/apis/apps/v1/namespaces/kube-system/deployments/cilium-operator",
    );
    expect(apiPath(apiResource("nodes"), "ignored")).toBe("/api/v1/nodes");
    expect(apiPath(apiResource("endpointslices"), "cca-dp")).toBe(
      "/apis/discovery.k8s.io/v1/namespaces/cca-dp/endpointslices",
    );
  });

  it("give the kubectl command older bundles recorded for the same question (their calls' argv)", () => {
    // these are argv as the shipped bundles recorded them (calls/*.jsonl) before the api target
    expect(
      kubectlEquivalent(parseApiArgv(apiGet({ resource: "pods", namespace: "cca-dp", selector: "app=web" }))),
    ).toEqual(["-n", "cca-dp", "get", "pods", "-l", "app=web", "-o", "json"]);
    expect(
      kubectlEquivalent(
        parseApiArgv(apiWatch({ resource: "pod", name: "probe", namespace: "cca-dp", until: "Ready" })),
      ),
    ).toEqual(["-n", "cca-dp", "get", "pod", "probe", "-o", "json"]);
    expect(kubectlEquivalent(parseApiArgv(apiGet({ resource: "nodes" })))).toEqual([
      "get",
      "nodes",
      "-o",
      "json",
    ]);
    expect(kubectlEquivalent(parseApiArgv(API_BULK_APPLY))).toEqual(["apply", "-f", "-"]);
    expect(
      kubectlEquivalent(
        parseApiArgv(apiBulkDelete(["services", "endpointslices"], "cca-dp", "dpc-measure=scale")),
      ),
    ).toEqual([
      "-n",
      "cca-dp",
      "delete",
      "services,endpointslices",
      "-l",
      "dpc-measure=scale",
      "--wait=true",
    ]);
  });

  it("itemsOf: a list's items, a named answer's one object, nothing for an empty list", () => {
    expect(itemsOf({ kind: "List", items: [{ a: 1 }] })).toEqual([{ a: 1 }]);
    expect(itemsOf({ metadata: { name: "x" } })).toEqual([{ metadata: { name: "x" } }]);
    expect(itemsOf({ kind: "PodList", items: [] })).toEqual([]);
    expect(itemsOf(null)).toEqual([]);
  });
});
