import { afterAll, describe, expect, it } from "vitest";
import { PROPERTIES, TOPICS } from "../../suites/topics.ts";
import { BundleCopies, KUBE_SVC_LINE, shipped } from "../testing/tamper.ts";
import { HEADLINE, headlineCell } from "./headline.ts";
import { buildReport, type ReportColumn, renderReport } from "./html.ts";

const copies = new BundleCopies();
afterAll(() => copies.cleanup());
const shippedReport = await buildReport(
  ["kpr", "kube-proxy", "drop-kpr"].map((b) => shipped(b)),
  TOPICS,
);
// the columns by their bundle (the report orders them by version, then mode)
const [kpr, kubeProxy, drop] = ["kpr", "kube-proxy", "drop-kpr"].map(
  (b) => shippedReport.columns.find((c) => c.dir === shipped(b)) as ReportColumn,
) as [ReportColumn, ReportColumn, ReportColumn];
const cell = (c: ReportColumn, key: string) =>
  headlineCell(HEADLINE.find((h) => h.key === key) ?? (undefined as never), (id) =>
    c.check.verdicts.find((v) => v.id === id),
  );

describe("the report's headline", () => {
  it("five claims, each carried by declared properties of the topic that observes it", () => {
    expect(HEADLINE.map((h) => h.title)).toEqual([
      "No kube-proxy rules",
      "0→4 backend slots",
      "The holder's socket is at a Pod IP",
      "NodePort answers with no listener",
      "The ghost Service fails fast: curl exit 7",
    ]);
    const ids = new Set(PROPERTIES.map((p) => p.id));
    for (const h of HEADLINE) for (const p of h.properties) expect(ids.has(p.id), p.id).toBe(true);
  });

  it("each cell shows its verdict, the values and the line from the verdict's evidence", () => {
    const ct = kpr.check.records.ct?.record;
    expect(cell(kpr, "socket-at-pod-ip")).toMatchObject({
      status: "pass",
      lineFrom: "holder.socket-peer",
      line: expect.stringMatching(new RegExp(`^tcp\\s.*\\S+:40404\\s+${ct?.backend}\\s+ESTABLISHED$`)),
      facts: [{ id: "holder.socket-peer", observed: "backend", expected: "backend", status: "pass" }],
    });
    // beside kube-proxy the socket stays at the ClusterIP: the claim is not this mode's, and the verdict says so
    const web = kubeProxy.check.records.iptables?.record.cluster_ip;
    expect(cell(kubeProxy, "socket-at-pod-ip")).toMatchObject({
      status: "pass",
      line: expect.stringMatching(new RegExp(`\\s${web}:80\\s+ESTABLISHED$`)),
      facts: [{ observed: "cluster-ip" }],
    });
    for (const c of [kpr, kubeProxy]) {
      expect(cell(c, "backend-slots").line).toMatch(/:80\/TCP \(4\) +\S+:8080/);
      expect(cell(c, "ghost-fails-fast").line).toMatch(/^curl: \(7\) /);
      expect(cell(c, "nodeport-no-listener")).toMatchObject({
        status: "pass",
        line: expect.stringContaining("http_code=200"),
        facts: [{ observed: "200" }, { observed: "0", label: "listening sockets" }],
      });
    }
    // kube-proxy's own rule for web, found in iptables-save on a node
    expect(cell(kubeProxy, "no-kube-proxy-rules")).toMatchObject({
      line: expect.stringMatching(/^-A KUBE-SERVICES .*cca-dp\/web:http cluster IP.* -j KUBE-SVC-/),
      at: {
        file: expect.stringMatching(/^raw\/iptables\/\d+-iptables-save\.txt(\.gz)?$/),
        line: expect.any(Number),
      },
      absence: false,
    });
    // without kube-proxy nothing matched: the cell says so, it does not invent a line
    expect(cell(kpr, "no-kube-proxy-rules")).toMatchObject({
      status: "pass",
      line: "no line of iptables-save contains KUBE-SVC",
      absence: true,
      facts: [{ observed: "0" }, { observed: "0" }],
    });
  });

  it("a bundle without the topic: skipped, with the reason", () => {
    expect(cell(drop, "no-kube-proxy-rules")).toMatchObject({
      status: "skip",
      line: null,
      note: expect.stringContaining("has no recorded calls for iptables"),
    });
    expect(cell(drop, "ghost-fails-fast").status).toBe("pass");
  });

  it("a kube-proxy rule in a kpr bundle fails the row and shows that rule", async () => {
    const dir = copies.tampered("kpr", "iptables", ["iptables-save"], (t) =>
      t.replace("COMMIT", `${KUBE_SVC_LINE}\nCOMMIT`),
    );
    const [tampered] = (await buildReport([dir], TOPICS)).columns as [ReportColumn];
    expect(cell(tampered, "no-kube-proxy-rules")).toMatchObject({
      status: "fail",
      line: KUBE_SVC_LINE,
      lineFrom: "iptables.kube-svc-lines",
      facts: [
        { status: "fail", observed: "1", expected: "0" },
        { status: "fail", observed: "1", expected: "0" },
      ],
    });
    const html = renderReport(await buildReport([dir], TOPICS));
    const row = html.slice(html.indexOf('<tr data-claim="no-kube-proxy-rules">'));
    expect(row.slice(0, row.indexOf("</tr>"))).toContain('data-status="fail"');
  });

  it("the page opens on it: the headline comes before the properties and the runs", () => {
    const html = renderReport(shippedReport);
    const at = (s: string) => html.indexOf(s);
    expect(at('<section id="headline"')).toBeGreaterThan(0);
    expect(at('<section id="headline"')).toBeLessThan(at('id="properties"'));
    expect(at('id="properties"')).toBeLessThan(at('id="runs"'));
    expect(html.match(/<tr data-claim="/g)).toHaveLength(5);
    expect(html.match(/<td class="hl-cell"/g)).toHaveLength(15);
  });
});
