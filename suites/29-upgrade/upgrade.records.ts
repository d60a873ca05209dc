/** The upgrade topic's record: its legs (helpers/records/types.ts UpgradeLeg) under load. */

import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { UpgradeLeg } from "../../helpers/records/types.ts";

/** Ours: a Cilium upgrade (and with ROLLBACK=1 the way back) under load. */
export interface UpgradeRecord {
  from: string;
  from_minor: string;
  to: string;
  legs: UpgradeLeg[];
  /** Every request the loop made over the whole topic. */
  loop_total: number;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    upgrade: UpgradeRecord;
  }
}

/** The examples' upgrade leg (the restart and rollback legs are made from it). */
export const EXAMPLE_LEG: UpgradeLeg = {
  kind: "upgrade",
  from: "1.19.7",
  to: "1.20.2",
  duration_s: 95.2,
  window: { from_ms: 1000, to_ms: 111_000, from_line: "1000", to_line: "111000" },
  agents_after: {
    "cdc-kpr-worker": { version: "1.20.2", ok: true, line: "Cilium:   Ok   1.20.2" },
  },
  agent_restarts: {
    "cdc-kpr-worker": { pod: "cilium-x7k2p", started: "2026-12-03T04:35:02Z", ready: "2026-12-03T04:35:20Z" },
  },
  drops: [],
  unexpected_drops: [],
  error_lines: [],
  rolled: {
    backends: ["10.244.1.31:8080", "10.244.2.17:8080"],
    views: [{ node: "cdc-kpr-worker", backends: ["10.244.1.31:8080 (active)", "10.244.2.17:8080 (active)"] }],
    error: null,
  },
  connections: [
    {
      name: "conn-0",
      node: "cdc-kpr-worker",
      via: "clusterip",
      connection_before: 1,
      connection_after: 1,
      closed_events: 0,
      error_events: 0,
      backend_before: "web-7d9-a",
      backend_after: "web-7d9-a",
      ct_before: null,
      ct_after: null,
      ct_backend_before: null,
      ct_backend_after: null,
      replies_during: 110,
      break_lines: [],
      last_line_after: '{"event":"reply","status":200,"body":"web-7d9-a"}',
    },
  ],
  requests: {
    total: 550,
    failed: 0,
    failures: [],
    longest_gap: {
      to: "clusterip",
      ms: 212,
      after: '{"i":40,"to":"clusterip","t":9000,"ms":1.1,"ok":true,"status":200,"backend":"web-7d9-a"}',
      before: '{"i":42,"to":"clusterip","t":9212,"ms":1.3,"ok":true,"status":200,"backend":"web-7d9-b"}',
    },
    longest_outage: null,
    loop_stall_ms: 212,
    slowest_ms: 3.4,
    backends: { clusterip: { "web-7d9-a": 270, "web-7d9-b": 280 } },
  },
  conformance: {
    bundle: "after-upgrade",
    exit: "0",
    complete: true,
    passed: 64,
    failed: 0,
    known_issues: 0,
    skipped: 3,
    verdicts: [{ id: "iptables.kpr-mode", status: "pass", expected: "True", observed: "True" }],
  },
  evidence: {
    conformance: [
      {
        quote: "bundle after-upgrade exit 0",
        at: { file: "raw/upgrade/070-node-conformance-here.txt", line: 1 },
      },
    ],
    connections: [
      {
        quote: '{"event":"connected","local":"10.244.1.9:40410","peer":"10.96.44.2:80","connection":1}',
        at: { file: "raw/upgrade/040--n-cca-dp-logs-conn-0.txt", line: 2 },
      },
    ],
    backends: [
      {
        quote: '{"event":"reply","status":200,"body":"web-7d9-a"}',
        at: { file: "raw/upgrade/040--n-cca-dp-logs-conn-0.txt", line: 90 },
      },
    ],
    agents: [
      { quote: "Cilium:   Ok   1.20.2", at: { file: "raw/upgrade/067-cilium-dbg-status.txt", line: 5 } },
    ],
    requests: [
      {
        derived: "550 requests, 0 failed",
        from: [{ file: "raw/upgrade/136--n-cca-dp-logs-request-loop.txt" }],
      },
    ],
    gap: [
      {
        derived: "no failed request: no outage",
        from: [{ file: "raw/upgrade/136--n-cca-dp-logs-request-loop.txt" }],
      },
    ],
    context: [],
  },
};

export const records = {
  upgrade: {
    file: "upgrade.json",
    legs: (r) => ({ legs: r.legs, from: r.from, to: r.to }),
    example: () => ({
      from: "1.19.7",
      from_minor: "1.19",
      to: "1.20.2",
      loop_total: 1200,
      legs: [
        EXAMPLE_LEG,
        {
          ...EXAMPLE_LEG,
          kind: "rollback",
          from: "1.20.2",
          to: "1.19.7",
          agents_after: {
            "cdc-kpr-worker": { version: "1.19.7", ok: true, line: "Cilium:   Ok   1.19.7" },
          },
        },
      ],
    }),
  },
} satisfies RecordDecls;
