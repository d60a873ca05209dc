/**
 * Every topic, in the order a run observes them (the lab's steps, then the notebook's sections, the IPv6 family of a
 * dual-stack cluster, the Service surface beyond ClusterIP and NodePort and its IPv6 family, then the measurements, the invariants and
 * the upgrade leg). Each topic lives in one folder under suites/: its
 * `*.topic.ts` declares what it deploys, the commands it runs, the records it builds and its properties;
 * its `*.spec.ts` runs it. The CLI (`expectations`, `check`, `compare`, `summary`) and the README's table
 * read the same declarations from here, without vitest.
 *
 * Adding a topic: its folder (`nn-<name>/`: `<name>.records.ts`, `<name>.topic.ts`, `<name>.spec.ts`) and its line
 * in TOPIC_LIST below. `Topic`, the record names and the record catalogue (RECORDS: each record's file in a
 * bundle and its example) are derived from the list; helpers/ names no topic (helpers/no-topic-names.test.ts).
 */

import { checkoutTopics } from "../helpers/check-cache.ts";
import type { Property } from "../helpers/properties/types.ts";
import { type RecordCatalogue, recordCatalogue } from "../helpers/records/catalogue.ts";
import type { RecordName } from "../helpers/records/types.ts";
import type { TopicDeclaration } from "../helpers/topic.ts";
import { topic as config } from "./00-config/config.topic.ts";
import { topic as iptables } from "./01-iptables/iptables.topic.ts";
import { topic as serviceMap } from "./02-service-map/service-map.topic.ts";
import { topic as scale } from "./03-scale/scale.topic.ts";
import { topic as holder } from "./04-holder/holder.topic.ts";
import { topic as program } from "./05-program/program.topic.ts";
import { topic as nodePort } from "./06-nodeport/nodeport.topic.ts";
import { topic as ghost } from "./07-ghost/ghost.topic.ts";
import { topic as report } from "./08-report/report.topic.ts";
import { topic as kubeDns } from "./09-kube-dns/kube-dns.topic.ts";
import { topic as hostRouting } from "./10-host-routing/host-routing.topic.ts";
import { topic as translation } from "./11-translation/translation.topic.ts";
import { topic as vxlan } from "./12-vxlan/vxlan.topic.ts";
import { topic as ipv6 } from "./13-ipv6/ipv6.topic.ts";
import { topic as loadbalancer } from "./14-loadbalancer/loadbalancer.topic.ts";
import { topic as externalIp } from "./15-external-ip/external-ip.topic.ts";
import { topic as trafficPolicy } from "./16-traffic-policy/traffic-policy.topic.ts";
import { topic as sessionAffinity } from "./17-session-affinity/session-affinity.topic.ts";
import { topic as hostNetwork } from "./18-host-network/host-network.topic.ts";
import { topic as surfaceIpv6 } from "./19-surface-ipv6/surface-ipv6.topic.ts";
import { topic as lifecycle } from "./20-lifecycle/lifecycle.topic.ts";
import { topic as lifecyclePorts } from "./21-lifecycle-ports/lifecycle-ports.topic.ts";
import { topic as measureScale } from "./22-measure-scale/measure-scale.topic.ts";
import { topic as measureLatency } from "./23-measure-latency/measure-latency.topic.ts";
import { topic as invariants } from "./24-invariants/invariants.topic.ts";
import { topic as lifecycleAgents } from "./25-lifecycle-agents/lifecycle-agents.topic.ts";
import { topic as lifecycleOperator } from "./26-lifecycle-operator/lifecycle-operator.topic.ts";
import { topic as lifecycleControl } from "./27-lifecycle-control/lifecycle-control.topic.ts";
import { topic as restart } from "./28-restart/restart.topic.ts";
import { topic as upgrade } from "./29-upgrade/upgrade.topic.ts";

/** The topics, in order: the one list a new topic is added to. */
const TOPIC_LIST = [
  config,
  iptables,
  serviceMap,
  scale,
  holder,
  program,
  nodePort,
  ghost,
  report,
  kubeDns,
  hostRouting,
  translation,
  vxlan,
  ipv6,
  loadbalancer,
  externalIp,
  trafficPolicy,
  sessionAffinity,
  hostNetwork,
  surfaceIpv6,
  lifecycle,
  lifecyclePorts,
  measureScale,
  measureLatency,
  invariants,
  lifecycleAgents,
  lifecycleOperator,
  lifecycleControl,
  restart,
  upgrade,
] as const;

/** A listed topic's name. */
export type Topic = (typeof TOPIC_LIST)[number]["name"];

/** A record a listed topic builds. */
export type BuiltRecord = (typeof TOPIC_LIST)[number]["builds"][number];

/**
 * Every record a records file registers (helpers/records/types.ts LabRecords) is built by a listed topic: a
 * topic's folder without its line in TOPIC_LIST fails to compile here.
 */
const everyRecordBuilt: [RecordName] extends [BuiltRecord] ? true : false = true;
void everyRecordBuilt;

// marked as the checkout's own: the run's shared judgements key them by name (helpers/check-cache.ts)
export const TOPICS: TopicDeclaration[] = checkoutTopics([...TOPIC_LIST]);

/** Every record a bundle may hold, by name: its file and example, as its topic declares it. */
export const RECORDS: RecordCatalogue = recordCatalogue(TOPICS);

/** Every declared property, topic by topic. */
export const PROPERTIES: Property[] = TOPICS.flatMap((t) => t.properties);

export function topicByName(name: Topic): TopicDeclaration {
  const t = TOPICS.find((x) => x.name === name);
  if (!t) throw new Error(`no topic ${name}`);
  return t;
}

export function propertyById(id: string): Property {
  const p = PROPERTIES.find((x) => x.id === id);
  if (!p) throw new Error(`no property ${id}`);
  return p;
}
