/**
 * helpers/ names no topic (issue 43): a topic owns its records (suites/<nn-name>/<name>.records.ts) and helpers/
 * reads any of them by the declarations it is handed, so adding a topic never opens helpers/. This fails when a
 * source file under helpers/ imports from suites/, spells a topic's or a record's name as a string, or reads a
 * record or a topic by name in code (`.get("ghost")`, `records.upgrade`, `v.topic === "restart"`).
 *
 * Some topic names are also ordinary words of the datapath (kube-proxy's `iptables` mode, the `vxlan` tunnel, the
 * `ipv6` family, the `holder` Pod, a leg's kind `upgrade`): ALLOWED lists each such word, the files that use it in
 * that other sense, and the sense. Reading a record or a topic by name is never allowed, whatever the word.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { RECORDS, TOPICS } from "../suites/topics.ts";

const ROOT = join(import.meta.dirname, "..");

/** Words that are a topic's or a record's name and also something else, where helpers/ uses them so. */
const ALLOWED: Record<string, { sense: string; files: string[] }> = {
  iptables: {
    sense: "kube-proxy's mode, Cilium's masquerading, a place a packet is translated",
    files: [
      "helpers/records/datapath-config.ts",
      "helpers/parse/configmap-json.ts",
      "helpers/report/picture.ts",
      "helpers/properties/requirements.ts",
    ],
  },
  vxlan: { sense: "a tunnel protocol", files: ["helpers/records/datapath-config.ts"] },
  ipv6: {
    sense: "an IP family",
    files: [
      "helpers/records/datapath-config.ts",
      "helpers/parse/nft-ruleset.ts",
      "helpers/properties/family.ts",
      "helpers/properties/types.ts",
      "helpers/topic.ts",
    ],
  },
  config: {
    sense:
      "where a setting was read (the agent's config), a parser's format, a kubeconfig's file name, a container",
    files: [
      "helpers/records/datapath-config.ts",
      "helpers/parse/config.ts",
      "helpers/testing/fake-api-server.ts",
      "helpers/observe/pod-status.fixtures.ts",
    ],
  },
  holder: {
    sense: "the holder Pod and program (manifests/holder/)",
    files: ["helpers/observe/workloads.ts", "helpers/observe/pod-status.fixtures.ts"],
  },
  scale: {
    sense: "kubectl's verb, a measurement Service's label",
    files: ["helpers/observe/workloads.ts", "helpers/measure/workloads.ts"],
  },
  svc: { sense: "kubectl's short name for services", files: ["helpers/exec/api-argv.ts"] },
  ct: { sense: "cilium-dbg's conntrack command (`bpf ct list`)", files: ["helpers/observe/leg-traffic.ts"] },
  nodeport: {
    sense: "a path's or a load target's kind, kube-proxy's NodePort rules",
    files: [
      "helpers/report/picture.ts",
      "helpers/observe/load.ts",
      "helpers/parse/nft-ruleset.ts",
      "helpers/records/types.ts",
    ],
  },
  clusterip: {
    sense: "a load target's kind",
    files: ["helpers/observe/load.ts", "helpers/records/types.ts"],
  },
  loadbalancer: {
    sense: "a load target's kind",
    files: ["helpers/observe/load.ts", "helpers/records/types.ts"],
  },
  datapath: {
    sense: "whose loss a failure was (an attribution's kind), the report's row of the datapath configuration",
    files: ["helpers/parse/packets.ts", "helpers/upgrade-gate.ts", "helpers/report/html.ts"],
  },
  "kube-dns": { sense: "the kube-system Service", files: ["helpers/observe/workloads.ts"] },
  upgrade: {
    sense:
      "a leg's kind (UpgradeLeg.kind), the upgrade gate's JUnit suite, an upgrade's column group in the report",
    files: [
      "helpers/upgrade-gate.ts",
      "helpers/upgrade-inputs.ts",
      "helpers/report/upgrade.ts",
      "helpers/records/upgrade.ts",
      "helpers/records/types.ts",
      "helpers/check-junit.ts",
      "helpers/report/column-head.ts",
    ],
  },
  restart: {
    sense: "a leg's kind (UpgradeLeg.kind), kubectl's `rollout restart`",
    files: ["helpers/upgrade-gate.ts", "helpers/records/types.ts", "helpers/observe/leg-roll.ts"],
  },
  scaling: { sense: "the id of the measurements' chart", files: ["helpers/measure/summary.ts"] },
};

/** A source's code (comments removed) and its string literals' contents (template literals' literal parts). */
function lex(src: string): { code: string; strings: string[] } {
  let code = "";
  const strings: string[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    const next = src[i + 1];
    if (c === "/" && next === "/") {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      const end = src.indexOf("*/", i + 2);
      i = end < 0 ? src.length : end + 2;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      let text = "";
      while (j < src.length && src[j] !== c) {
        if (src[j] === "\\") {
          text += src.slice(j, j + 2);
          j += 2;
        } else if (c === "`" && src[j] === "$" && src[j + 1] === "{") {
          // an interpolation ends a literal part: its code is kept for the patterns, its parts are strings of their own
          strings.push(text);
          text = "";
          let depth = 1;
          j += 2;
          const start = j;
          while (j < src.length && depth > 0) {
            if (src[j] === "{") depth++;
            else if (src[j] === "}") depth--;
            j++;
          }
          const inner = lex(src.slice(start, j - 1));
          strings.push(...inner.strings);
          code += ` ${inner.code} `;
        } else {
          text += src[j];
          j++;
        }
      }
      strings.push(text);
      code += `${c}${text}${c}`;
      i = j + 1;
    } else {
      code += c;
      i++;
    }
  }
  return { code, strings };
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** What in one helpers/ source names a topic or a record (`names`), as findings "file: what". */
function namings(file: string, src: string, names: readonly string[]): string[] {
  const out: string[] = [];
  for (const m of src.matchAll(/from\s+"((?:\.\.\/)+suites\/[^"]*)"/g)) out.push(`${file}: imports ${m[1]}`);
  const { code, strings } = lex(src);
  const set = new Set(names);
  for (const s of new Set(strings))
    if (set.has(s) && !ALLOWED[s]?.files.includes(file)) out.push(`${file}: the string "${s}"`);
  const alt = names.map(esc).join("|");
  const patterns: [RegExp, string][] = [
    [new RegExp(`\\.(?:get|evidence)\\(\\s*["'\`](${alt})["'\`]`, "g"), "reads the record"],
    [new RegExp(`\\b(?:records|set|earlierRecords\\(\\))\\??\\.(${alt})\\b`, "g"), "reads the record"],
    [new RegExp(`\\btopic\\s*[!=]==?\\s*["'\`](${alt})["'\`]`, "g"), "compares a topic with"],
    [new RegExp(`["'\`](${alt})["'\`]\\s*[!=]==?\\s*[\\w.]*\\btopic\\b`, "g"), "compares a topic with"],
    [new RegExp(`\\bt\\s*[!=]==?\\s*["'\`](${alt})["'\`]`, "g"), "compares a topic with"],
    [new RegExp(`\\.startsWith\\(\\s*["'\`](${alt})\\.`, "g"), "reads a property id of"],
  ];
  for (const [re, what] of patterns) for (const m of code.matchAll(re)) out.push(`${file}: ${what} ${m[1]}`);
  return out;
}

function helperSources(): string[] {
  return readdirSync(join(ROOT, "helpers"), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

const NAMES = [...new Set([...TOPICS.map((t) => t.name), ...Object.keys(RECORDS)])];

describe("helpers/ names no topic", () => {
  it("knows the names (a walk over none would pass)", () => {
    expect(NAMES).toContain("host-network");
    expect(NAMES).toContain("hostNetwork");
    expect(NAMES).toContain("upgrade");
    expect(helperSources().length).toBeGreaterThan(100);
  });

  it("finds a topic named in a helper, and lets a word of another sense be", () => {
    const src = [
      'import { topic } from "../suites/18-host-network/host-network.topic.ts";',
      '// a comment may say ghost and "ghost"',
      'const a = r.get("hostNetwork");',
      "const b = check.records.upgrade?.record;",
      'const c = verdicts.filter((v) => v.topic === "restart");',
      'const d = id.startsWith("upgrade.rollback.");',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a source under test, with a template literal in it
      'const e = ["svc", `${x}`, `ghost`];',
      'const f = { kind: "restart" };',
    ].join("\n");
    expect(namings("helpers/upgrade-gate.ts", src, NAMES)).toEqual([
      "helpers/upgrade-gate.ts: imports ../suites/18-host-network/host-network.topic.ts",
      'helpers/upgrade-gate.ts: the string "hostNetwork"',
      'helpers/upgrade-gate.ts: the string "svc"',
      'helpers/upgrade-gate.ts: the string "ghost"',
      "helpers/upgrade-gate.ts: reads the record hostNetwork",
      "helpers/upgrade-gate.ts: reads the record upgrade",
      "helpers/upgrade-gate.ts: compares a topic with restart",
      "helpers/upgrade-gate.ts: reads a property id of upgrade",
    ]);
  });

  it("no source under helpers/ names a topic or a record", () => {
    const found = helperSources().flatMap((f) => namings(f, readFileSync(join(ROOT, f), "utf8"), NAMES));
    expect(found).toEqual([]);
  });

  it("every word allowed is a topic's or a record's name, in files that use it", () => {
    for (const [word, a] of Object.entries(ALLOWED)) {
      expect(NAMES, word).toContain(word);
      for (const f of a.files)
        expect(lex(readFileSync(join(ROOT, f), "utf8")).strings, `${word} in ${f}`).toContain(word);
    }
  });
});
