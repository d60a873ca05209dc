import type { RunContext } from "./observe/context.ts";
import type { Property, Source } from "./properties/types.ts";
import type { RecordDecls } from "./records/catalogue.ts";
import type { RecordName, RecordSet } from "./records/types.ts";

/**
 * Where a step's command runs: the Cilium agent's container, a node's host namespace, a Pod, a client outside
 * the nodes, kubectl, this machine, or the API server in process (`api`: helpers/exec/api.ts).
 */
export type StepTarget = "agent" | "node" | "pod" | "outside" | "kubectl" | "local" | "api";

/**
 * One command a topic runs, in order. `run` is the command as recorded (argv joined by spaces), where a
 * `<placeholder>` stands for one word that differs between runs (a device name, an address). A test
 * compares these with the calls recorded in the shipped bundles, so the list cannot drift from the code.
 */
export interface Step {
  on: StepTarget;
  run: string;
  /** What the step is for, in a few words. */
  for: string;
}

/** A property as its topic declares it (the topic fills in `topic`). */
export type PropertyDeclaration = Omit<Property, "topic">;

/**
 * One topic: what it deploys, what it runs where, which records it builds, and the properties it judges. `N` is its
 * name and `K` the names of its records, kept by defineTopic so that suites/topics.ts derives the unions from its list.
 */
export interface TopicDeclaration<N extends string = string, K extends RecordName = RecordName> {
  /** Its name (a folder's `nn-<name>`): any string here, the union of them derived in suites/topics.ts (Topic). */
  name: N;
  /** What the topic shows, in one sentence. */
  title: string;
  source: Source;
  /** Manifests under manifests/ it applies (by file name). */
  deploys: string[];
  steps: Step[];
  /**
   * The records it builds, each declared in its folder's records file: its type (registered in LabRecords), its
   * file in a bundle and an example (helpers/records/catalogue.ts).
   */
  records: Pick<RecordDecls, K>;
  /** The names of `records`, in order: what its observation returns. */
  builds: K[];
  observe(ctx: RunContext): Promise<RecordSet>;
  properties: Property[];
  /**
   * Set on a topic that asks its questions of the IPv6 family: each of its properties then declares its IPv4 twin,
   * or why it has none (`family`, helpers/properties/family.ts; suites/family.test.ts holds the pairs).
   */
  family?: "ipv6";
  /**
   * Set for a topic that only some runs record (e.g. "an upgrade run (UPGRADE_TO)"): a bundle without it is not
   * missing anything, so `compare` does not call its properties' absence a regression.
   */
  runsIn?: string;
  /**
   * How the topic shares a cluster run with the others (suites/schedule.ts): `alone`, why nothing may run beside
   * it (it measures, changes what every topic sees, or reads what every earlier one left); or `after`, the
   * earlier topics it must follow (it reads their records or objects, or they change what it observes) and why.
   * It runs beside every other topic that does not run alone: declare what it reads and changes truthfully.
   * A topic that runs alone may name the earlier topics, alone too and right before it in file order, that may share
   * its turn (`besides`, and why: `besidesWhy`): it then waits for every earlier topic but those.
   */
  schedule: { alone: string; besides?: string[]; besidesWhy?: string } | { after: string[]; why: string };
  /**
   * The cluster state a topic counts whole, and the state it changes (issue 35: identical runs, identical
   * answers). suites/schedule.test.ts proves that no two topics that may run at once have one counting what the
   * other changes.
   */
  shared?: { counts?: readonly SharedState[]; changes?: readonly SharedState[] };
}

/**
 * State several topics touch: kube-proxy's Service rules (the KUBE-SVC lines iptables counts: any Service with
 * endpoints adds some; and any Service or endpoint change makes kube-proxy rewrite its chains, which resets the
 * counters ghost's and translation's windows count), web's backends (its Pods, so its slots and endpoints), the
 * host's DNS traffic to kube-dns (the translation topic's counter windows).
 */
export type SharedState = "kube-proxy service rules" | "web backends" | "host dns traffic";

/** A topic as its folder declares it: its records (`records`) and properties; defineTopic names what it builds. */
export function defineTopic<const N extends string, const D extends RecordDecls>(
  t: Omit<TopicDeclaration<N>, "properties" | "records" | "builds"> & {
    records: D;
    properties: PropertyDeclaration[];
  },
): TopicDeclaration<N, keyof D & RecordName> {
  const builds = Object.keys(t.records) as (keyof D & RecordName)[];
  return {
    ...t,
    records: t.records as unknown as TopicDeclaration<N, keyof D & RecordName>["records"],
    builds,
    properties: t.properties.map((p) => ({ ...p, topic: t.name })),
  };
}

/** The regular expression a step's `run` stands for: literal words, `<x>` for any one word. */
export function stepPattern(run: string): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const parts = run.split(/(<[a-z-]+>)/).map((p) => (/^<[a-z-]+>$/.test(p) ? "\\S+" : esc(p)));
  return new RegExp(`^${parts.join("")}`);
}
