/** The loadbalancer topic's record. */

import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { EdgeSite, Probe } from "../../helpers/records/types.ts";
import { exampleNowhere as nowhere, exampleOk as ok, EXAMPLE_SITE as site } from "../surface.ts";

/** Ours (issue 34): a LoadBalancer address from Cilium's LB-IPAM, and ipMode Proxy beside it. */
export interface LoadBalancerRecord extends EdgeSite {
  /** Our pool's range (`start-stop`), or null when the run had no range of ours for such addresses. */
  pool: string | null;
  /** edge-lb's ingress address and its ipMode as the API server holds it. */
  lb_ip: string | null;
  lb_ip_mode: string | null;
  /** Backend slots of `<lb_ip>:80/TCP` (external scope) in the LB map on the far node: 0 when it has no entry. */
  lb_slots: number | null;
  /** `<lb_ip>:0/ANY` in that LB map (the wildcard entry of 1.19+). */
  lb_wildcard: boolean | null;
  /** iptables-save lines on the far node naming edge-lb's address (kube-proxy's `loadbalancer IP` rule). */
  lb_rules: number | null;
  lb_from_pod_near: Probe | null;
  lb_from_pod_far: Probe | null;
  lb_from_node: Probe | null;
  /** edge-proxy's address, whose ipMode we set to Proxy, and its LB map rows plus kube-proxy rules. */
  proxy_ip: string | null;
  proxy_ip_mode: string | null;
  proxy_entries: number | null;
  proxy_from_pod: Probe | null;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    loadbalancer: LoadBalancerRecord;
  }
}

export const records = {
  loadbalancer: {
    file: "loadbalancer.json",
    example: (mode) => {
      const kpr = mode === "kpr";
      return {
        ...site,
        pool: "172.31.100.240-172.31.100.247",
        lb_ip: "172.31.100.240",
        lb_ip_mode: "VIP",
        lb_slots: kpr ? 2 : 0,
        lb_wildcard: kpr,
        lb_rules: kpr ? 0 : 1,
        lb_from_pod_near: ok("pod near", "http://172.31.100.240/hostname"),
        lb_from_pod_far: ok("pod far", "http://172.31.100.240/hostname"),
        lb_from_node: ok("node cdc-worker", "http://172.31.100.240/hostname"),
        proxy_ip: "172.31.100.241",
        proxy_ip_mode: "Proxy",
        proxy_entries: 0,
        proxy_from_pod: nowhere("pod far", "http://172.31.100.241/hostname"),
      };
    },
  },
} satisfies RecordDecls;
