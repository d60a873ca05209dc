/**
 * A mode's topics in two parts, for two jobs at once (docs/running.md, "Topics at once"): `disruptions` runs config,
 * then the three topics that disrupt the whole cluster and so run alone at the end of a run (the agents' restart
 * beside the operator's, then the API-server cut); `without-disruptions` every other topic. Each is the vitest
 * arguments of the conformance project: package.json's `test:conformance:<part>` scripts and `run --part` pass
 * these (suites/schedule.test.ts holds them to the topics' declarations, cli/run.test.ts the scripts to these).
 */
import { UserError } from "../helpers/errors.ts";

const DISRUPTIONS = [
  "suites/25-lifecycle-agents",
  "suites/26-lifecycle-operator",
  "suites/27-lifecycle-control",
];

export const PARTS = {
  disruptions: ["suites/00-config", ...DISRUPTIONS],
  "without-disruptions": DISRUPTIONS.flatMap((d) => ["--exclude", `${d}/**`]),
} as const satisfies Record<string, readonly string[]>;

export type Part = keyof typeof PARTS;

/** A part's name, or one line naming the valid ones. */
export function parsePart(v: string, said: string): Part {
  if (v in PARTS) return v as Part;
  throw new UserError(`${said}: valid parts are ${Object.keys(PARTS).join(" and ")}`);
}
