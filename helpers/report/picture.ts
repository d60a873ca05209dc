/**
 * Where a bundle's run translated the Service, drawn from its verdicts: for a Pod's connection to the
 * ClusterIP, a host process's query to a ClusterIP and a client outside the nodes calling the NodePort, the
 * place the Service address became a Pod IP — the socket hook (connect(), socket LB), a tc program (bpf_lxc
 * on the Pod's device, bpf_host on the node's) or kube-proxy's iptables. Nothing here is drawn by hand: a
 * changed verdict moves the dot.
 */

import { type Html, html } from "../html.ts";
import type { Verdict } from "../properties/judge.ts";
import { isFailure } from "../properties/status.ts";

export type Place = "socket" | "tc" | "iptables";

export interface TranslationPath {
  key: "pod" | "host" | "nodeport";
  from: string;
  /** Where the verdicts place the translation, or null when they do not show it. */
  at: Place | null;
  /** The worst status of the verdicts it is drawn from (skip: not observed in this bundle). */
  status: Verdict["status"];
  /** `property = observed` for each verdict it is drawn from. */
  because: string[];
}

type Lookup = (id: string) => Verdict | undefined;

const judged = (v: Verdict | undefined): v is Verdict => v !== undefined && v.status !== "skip";
const num = (v: Verdict | undefined) => (judged(v) && /^\d+$/.test(v.observed) ? Number(v.observed) : null);

function path(key: TranslationPath["key"], from: string, at: Place | null, used: Verdict[]): TranslationPath {
  // a change in a new minor is drawn as a failure (its assumed expectation did not hold)
  const failed = used.some((v) => isFailure(v.status));
  const status: Verdict["status"] = failed ? "fail" : used.length === 0 || at === null ? "skip" : "pass";
  return { key, from, at, status, because: used.map((v) => `${v.id} = ${v.observed}`) };
}

/** The three paths, each placed by the verdicts that observe it (see the rules inline). */
export function translationPaths(verdictOf: Lookup): TranslationPath[] {
  const v = (id: string) => {
    const x = verdictOf(id);
    return judged(x) ? x : undefined;
  };
  const hooks = v("program.socket-lb-hooks");
  const withHooks = (used: Verdict[]) => (hooks ? [...used, hooks] : used);

  // A Pod → ClusterIP: the holder's socket already points at the backend (socket LB, at connect()), or it
  // points at the ClusterIP and the packet is translated on its way: by bpf_lxc (Pod queries answered without
  // kube-proxy's counter moving, or a per-packet SVC conntrack entry), or by iptables (the counter moved).
  const peer = v("holder.socket-peer");
  const podQueries = v("translation.pod-by-ebpf");
  const svcEntries = v("holder.svc-entries");
  let pod: TranslationPath;
  if (peer?.observed === "backend") pod = path("pod", "Pod → ClusterIP", "socket", withHooks([peer]));
  else if (podQueries?.observed.startsWith("iptables"))
    pod = path("pod", "Pod → ClusterIP", "iptables", [...(peer ? [peer] : []), podQueries]);
  else if (peer?.observed === "cluster-ip" && podQueries?.observed === "eBPF")
    pod = path("pod", "Pod → ClusterIP", "tc", [peer, podQueries]);
  else if (peer?.observed === "cluster-ip" && (num(svcEntries) ?? 0) > 0 && svcEntries)
    pod = path("pod", "Pod → ClusterIP", "tc", [peer, svcEntries]);
  else pod = path("pod", "Pod → ClusterIP", null, [peer, podQueries].filter(judged));

  // A host process → ClusterIP: kube-proxy's counter moved per query (iptables); no kube-proxy rule at all
  // and socket LB's hooks at Cilium's cgroup root, which host processes are under (the socket hook).
  const hostQueries = v("translation.host-by-iptables");
  let host: TranslationPath;
  if (hostQueries?.observed === "iptables")
    host = path("host", "host → ClusterIP", "iptables", [hostQueries]);
  else if (hostQueries?.observed === "no kube-proxy rule" && (num(hooks) ?? 0) > 0)
    host = path("host", "host → ClusterIP", "socket", withHooks([hostQueries]));
  else host = path("host", "host → ClusterIP", null, hostQueries ? [hostQueries] : []);

  // A client outside → NodePort: the datapath's LB map has NodePort frontends (bpf_host on the node's device
  // answers first), or kube-proxy's KUBE-NODEPORTS rules do.
  const frontends = v("nodeport.bpf-frontends");
  const agentEntry = v("nodeport.agent-entry");
  const rules = v("nodeport.iptables-lines");
  const answered = v("nodeport.outside-http-200") ?? v("nodeport.http-200");
  const with200 = (used: Verdict[]) => (answered ? [...used, answered] : used);
  let nodeport: TranslationPath;
  if ((num(frontends) ?? 0) > 0 && frontends)
    nodeport = path("nodeport", "outside → NodePort", "tc", with200([frontends]));
  else if (!frontends && agentEntry?.observed === "true")
    nodeport = path("nodeport", "outside → NodePort", "tc", with200([agentEntry]));
  else if ((num(rules) ?? 0) > 0 && rules)
    nodeport = path(
      "nodeport",
      "outside → NodePort",
      "iptables",
      with200([...(frontends ? [frontends] : []), rules]),
    );
  else nodeport = path("nodeport", "outside → NodePort", null, [frontends, rules].filter(judged));

  return [pod, host, nodeport];
}

const PLACES: { place: Place; title: string; sub: string }[] = [
  { place: "socket", title: "socket hook", sub: "connect() · cgroup" },
  { place: "tc", title: "tc program", sub: "Pod / node device" },
  { place: "iptables", title: "iptables", sub: "kube-proxy" },
];
const PLACE_TITLE: Record<Place, string> = {
  socket: "the socket hook",
  tc: "a tc program",
  iptables: "iptables",
};

/** One sentence per path, for the picture's label and its caption. */
export function describePath(p: TranslationPath): string {
  if (p.at === null) return `${p.from}: not shown by this bundle's verdicts`;
  return `${p.from}: translated at ${PLACE_TITLE[p.at]}${p.status === "fail" ? " (a verdict failed)" : ""}`;
}

/** A small SVG (560 × 200, scales down): lanes for the three places, a line per path, a dot where it is translated. */
export function translationSvg(label: string, paths: TranslationPath[]): Html {
  const W = 560;
  const H = 200;
  const laneX = (i: number) => 170 + i * 112;
  const laneW = 100;
  const rowY = (i: number) => 78 + i * 48;
  const colour = {
    pass: "#1e7b34",
    fail: "#b3261e",
    skip: "#8a8f98",
    "known-issue": "#b06000",
    changed: "#b3261e",
  } as const;
  const lanes = PLACES.map(
    (p, i) =>
      html`<g class="lane" data-place="${p.place}"><rect x="${laneX(i)}" y="24" width="${laneW}" height="${H - 30}" rx="6" fill="#f5f6f8" stroke="#d9dce1"/><text x="${laneX(i) + laneW / 2}" y="40" text-anchor="middle" font-size="12" font-weight="600">${p.title}</text><text x="${laneX(i) + laneW / 2}" y="54" text-anchor="middle" font-size="10" fill="#5f6368">${p.sub}</text></g>`,
  );
  const start = 124;
  const end = 506;
  const rows = paths.map((p, i) => {
    const y = rowY(i);
    const c = colour[p.status] ?? colour.skip;
    const head = html`<text x="4" y="${y + 4}" font-size="11">${p.from}</text>`;
    const tail = html`<text x="${end + 6}" y="${y + 4}" font-size="11">${p.at ? "Pod IP" : "?"}</text>`;
    const title = html`<title>${describePath(p)}${p.because.length ? ` — ${p.because.join("; ")}` : ""}</title>`;
    if (p.at === null)
      return html`<g class="path" data-path="${p.key}" data-at="none" data-status="${p.status}">${title}${head}<line x1="${start}" y1="${y}" x2="${end}" y2="${y}" stroke="${c}" stroke-width="2" stroke-dasharray="3 4"/><text x="${(start + end) / 2}" y="${y - 6}" text-anchor="middle" font-size="10" fill="#5f6368">not shown by this bundle's verdicts</text>${tail}</g>`;
    const x = laneX(PLACES.findIndex((q) => q.place === p.at)) + laneW / 2;
    return html`<g class="path" data-path="${p.key}" data-at="${p.at}" data-status="${p.status}">${title}${head}<line x1="${start}" y1="${y}" x2="${x}" y2="${y}" stroke="#8a8f98" stroke-width="2" stroke-dasharray="6 4"/><line x1="${x}" y1="${y}" x2="${end - 4}" y2="${y}" stroke="${c}" stroke-width="3"/><path d="M${end - 4} ${y - 5} L${end + 2} ${y} L${end - 4} ${y + 5} Z" fill="${c}"/><circle cx="${x}" cy="${y}" r="7" fill="${c}"/>${p.status === "fail" ? html`<text x="${x}" y="${y + 4}" text-anchor="middle" font-size="10" fill="#fff">✘</text>` : ""}${tail}</g>`;
  });
  const aria = `${label}: ${paths.map(describePath).join("; ")}`;
  return html`<svg xmlns="http://www.w3.org/2000/svg" class="translation" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${aria}" font-family="system-ui, sans-serif">${lanes}${rows}</svg>`;
}
