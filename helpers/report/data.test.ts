import { describe, expect, it } from "vitest";
import { TOPICS } from "../../suites/topics.ts";
import { sourceText } from "../properties/judge.ts";
import { shipped } from "../testing/tamper.ts";
import { decodeData, encodeData, reportData } from "./data.ts";
import { buildReport } from "./html.ts";

// re-judging two full bundles took 9-25 s on a busy 2-core machine
describe("the report's embedded evidence", { timeout: 90_000 }, () => {
  it("holds each bundle's verdicts and raw outputs, a line that several bundles printed once, and decodes to the same", async () => {
    const input = await buildReport([shipped("1.20/kpr"), shipped("1.20/kube-proxy")], TOPICS);
    const columns = input.columns.map((c) => ({
      label: c.label,
      verdicts: new Map(c.check.verdicts.map((v) => [v.id, v])),
      raw: c.raw,
    }));
    const data = reportData(input.properties, (p) => sourceText(p as never), columns);
    expect(decodeData(encodeData(data))).toEqual(data);
    // interned: every string once
    expect(new Set(data.S).size).toBe(data.S.length);
    const lines = input.columns.flatMap((c) =>
      [...c.raw.values()].flatMap((o) => o.lines.map((l) => l.text)),
    );
    expect(lines.length).toBeGreaterThan(new Set(lines).size);
    // every verdict is there, with its status, observed value and each evidence item's quote at its place
    input.columns.forEach((c, i) => {
      const col = data.C[i] as (typeof data.C)[number];
      expect(data.S[col.label]).toBe(c.label);
      for (const v of c.check.verdicts) {
        const d = col.v[input.properties.findIndex((p) => p.id === v.id)];
        expect(d?.s, v.id).toBe(v.status);
        const quotes = v.evidence.flatMap((e) => ("quote" in e ? [e.quote] : []));
        expect(
          d?.ev.flatMap((e) => ("q" in e ? [data.S[e.q]] : [])),
          v.id,
        ).toEqual(quotes);
        if (v.status === "skip") expect(data.S[d?.r ?? -1], v.id).toBeTruthy();
      }
      // each output's lines as embedded, and the anchors the links use point at them
      [...c.raw.values()].forEach((o, k) => {
        const out = col.o[k];
        expect(out && data.S[out.k]).toBe(o.key);
        const back: string[] = [];
        for (let j = 0; out && j < out.l.length; j += 3) back.push(data.S[out.l[j + 1] as number] as string);
        expect(back).toEqual(o.lines.map((l) => l.text));
      });
    });
    const anchors = data.C.flatMap((col, i) =>
      col.v.flatMap((v) => (v?.ev ?? []).flatMap((e) => ("q" in e ? [[i, e.at.a]] : []))),
    );
    expect(anchors.length).toBeGreaterThan(50);
    for (const [i, a] of anchors) expect(a).toMatch(new RegExp(`^r${i}o\\d+L\\d+$`));
  });

  it("keeps a hostile string as it is (the page sets it as text), and base64 cannot end an attribute", () => {
    const evil = `"><img src=x onerror=alert(1)></script><script>alert(2)</script>`;
    const data = reportData(
      [{ id: "x.y", why: evil, source: { doc: "lab", where: evil } } as never],
      () => evil,
      [],
    );
    const b64 = encodeData(data);
    expect(b64).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(decodeData(b64).S).toContain(evil);
  });
});
