/**
 * The report's headline: the field documents' five claims, one row each, per mode — the verdict of the
 * properties that carry the claim, their expected and observed values, and the one raw line that shows it
 * (a line the verdicts' evidence quotes verbatim at its place in the bundle).
 */

import type { Verdict } from "../properties/judge.ts";
import { isKnownIssue } from "../properties/status.ts";
import { type LinePlace, type Quote, shownValue } from "../records/evidence.ts";

export interface HeadlineClaim {
  key: string;
  /** The claim in a few words, as the row's title. */
  title: string;
  /** What the field document says, in one sentence. */
  says: string;
  /** Where it says it. */
  source: string;
  /** The properties that carry the claim (suites/NN-topic/*.topic.ts), the one whose line shows it first. */
  properties: { id: string; label: string }[];
  /** The evidence line that shows the claim best, in order of preference; otherwise the first. */
  line?: RegExp[];
  /** When the first property holds and its evidence is empty because nothing matched (a count of 0). */
  none?: string;
  /**
   * The claim in a mode's own words where that mode claims something else than the title (issue 37: "No
   * kube-proxy rules ✔ pass" read false in a kube-proxy column, where the rules are expected and present).
   */
  modes?: Partial<Record<string, string>>;
}

/** A claim as a mode states it: its own words, else the title. */
export function modeWords(claim: Pick<HeadlineClaim, "title" | "modes">, mode: string): string {
  return claim.modes?.[mode] ?? claim.title;
}

export const HEADLINE: HeadlineClaim[] = [
  {
    key: "no-kube-proxy-rules",
    title: "No kube-proxy rules",
    says: "iptables-save holds no KUBE-SVC rule and no line with the web ClusterIP: the Service lives in BPF maps",
    source: "lab step 1",
    properties: [
      { id: "iptables.kube-svc-lines", label: "KUBE-SVC lines" },
      { id: "iptables.cluster-ip-lines", label: "lines with the ClusterIP" },
    ],
    // kube-proxy's jump for the web Service first, then any KUBE-SVC rule, then any line naming a chain
    line: [/^-A KUBE-SERVICES .*cca-dp\/web.* -j KUBE-SVC-/, /^-A .*KUBE-SVC-/, /KUBE-SVC/],
    none: "no line of iptables-save contains KUBE-SVC",
    modes: { "kube-proxy": "kube-proxy's rules are there: its KUBE-SVC chains and the ClusterIP's lines" },
  },
  {
    key: "backend-slots",
    title: "0→4 backend slots",
    says: "Scaled to 4 replicas, web's entry in bpf lb list holds slot 0 (the Service) and backend slots 1–4, the EndpointSlice's ready Pods",
    source: "lab step 3",
    properties: [
      { id: "scale.four-slots", label: "backend slots" },
      { id: "scale.matches-endpointslice", label: "same as the EndpointSlice" },
    ],
    line: [/\(4\)/],
  },
  {
    key: "socket-at-pod-ip",
    title: "The holder's socket is at a Pod IP",
    says: "Socket LB rewrites connect(): netstat in the holder shows a backend Pod's IP:8080, while getpeername() still says ClusterIP:80",
    source: "lab step 4",
    properties: [{ id: "holder.socket-peer", label: "socket peer" }],
    line: [/^tcp /],
    modes: {
      "kube-proxy":
        "The holder's socket stays at the ClusterIP: no socket LB, each packet is translated on its way",
    },
  },
  {
    key: "nodeport-no-listener",
    title: "NodePort answers with no listener",
    says: "NodePort 30780 answers HTTP 200 although no process listens on it (ss shows no socket)",
    source: "lab step 6",
    properties: [
      { id: "nodeport.http-200", label: "HTTP code" },
      { id: "nodeport.no-listener", label: "listening sockets" },
    ],
    line: [/http_code=/],
    modes: { "kube-proxy": "NodePort answers with no listener: kube-proxy's iptables rules translate it" },
  },
  {
    key: "ghost-fails-fast",
    title: "The ghost Service fails fast: curl exit 7",
    says: "A Service without backends is refused at once: curl exits 7 (couldn't connect), not 28 (timed out at 5 s)",
    source: "lab step 7",
    properties: [
      { id: "ghost.fails-fast", label: "curl exit" },
      { id: "ghost.seconds", label: "seconds" },
    ],
    line: [/^curl: \(/],
  },
];

export interface HeadlineFact {
  id: string;
  label: string;
  status: Verdict["status"] | "absent";
  expected: string;
  observed: string;
  /** The versions of the known issue the property showed (a known-issue verdict only). */
  knownIssue?: string;
}

export interface HeadlineCell {
  status: Verdict["status"];
  facts: HeadlineFact[];
  /** The line that shows it, or null when no evidence line does. */
  line: string | null;
  /** True when `line` says that nothing matched (the claim's `none`), not a line of output. */
  absence: boolean;
  /** The property whose evidence the line is from. */
  lineFrom: string | null;
  /** Where the line is in the bundle (null for an absence). */
  at: LinePlace | null;
  /** Why the claim could not be judged here (the first skip's message). */
  note: string | null;
  /**
   * What this mode and version claim instead, in their own words, where they differ from the property's claim: a
   * known issue's claim (what goes wrong), or the verdict's `checked` (a version's behaviour, a configuration's case).
   */
  own: string | null;
}

/** One claim in one bundle: the worst verdict of its properties (fail, changed, known issue, pass, else skip) and its line. */
export function headlineCell(
  claim: HeadlineClaim,
  verdictOf: (id: string) => Verdict | undefined,
): HeadlineCell {
  const vs = claim.properties.map((p) => ({ p, v: verdictOf(p.id) }));
  const facts: HeadlineFact[] = vs.map(({ p, v }) => ({
    id: p.id,
    label: p.label,
    status: v?.status ?? "absent",
    expected: shownValue(v?.expected ?? ""),
    observed: shownValue(v?.observed ?? "-"),
    ...(v && isKnownIssue(v.status) ? { knownIssue: v.deviation?.versions ?? v.cilium ?? "" } : {}),
  }));
  const judged = vs.filter(({ v }) => v && v.status !== "skip");
  // the worst verdict: a failure, else a change in a new minor, else a known issue (never shown as a pass),
  // else a pass
  const status: Verdict["status"] = judged.some(({ v }) => v?.status === "fail")
    ? "fail"
    : judged.some(({ v }) => v?.status === "changed")
      ? "changed"
      : judged.some(({ v }) => isKnownIssue(v?.status))
        ? "known-issue"
        : judged.length > 0
          ? "pass"
          : "skip";
  const note =
    status === "skip" ? (vs.find(({ v }) => v)?.v?.message ?? "not declared in this bundle") : null;
  // the line: from the first failing property, else from the first whose evidence has one
  const order = [
    ...judged.filter(({ v }) => v?.status === "fail"),
    ...judged.filter(({ v }) => v?.status === "changed"),
    ...judged.filter(({ v }) => isKnownIssue(v?.status)),
    ...judged,
  ];
  const ownOf = (v: Verdict | undefined) =>
    v && isKnownIssue(v.status) && v.deviation?.claim
      ? v.deviation.claim
      : v?.checked && v.checked !== v.claim
        ? v.checked
        : null;
  const own = order.map(({ v }) => ownOf(v)).find((x) => x !== null) ?? null;
  for (const { p, v } of order) {
    const quotes = (v?.evidence ?? []).filter((e): e is Quote => "quote" in e && e.quote.trim() !== "");
    if (quotes.length === 0) continue;
    const q =
      (claim.line ?? [])
        .map((re) => quotes.find((e) => re.test(e.quote.trim())))
        .find((e) => e !== undefined) ?? (quotes[0] as Quote);
    // the line shown cut (issue 45: a 30-million-character line made a 30 MB page)
    return {
      status,
      facts,
      line: shownValue(q.quote.trim()),
      absence: false,
      lineFrom: p.id,
      at: q.at,
      note,
      own,
    };
  }
  const first = judged[0]?.v;
  const line = first && claim.none && first.status === "pass" && first.observed === "0" ? claim.none : null;
  return {
    status,
    facts,
    line,
    absence: line !== null,
    lineFrom: line ? (judged[0]?.p.id ?? null) : null,
    at: null,
    note,
    own,
  };
}
