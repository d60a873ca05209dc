import { UserError } from "../helpers/errors.ts";
import { MODES, type Mode } from "../helpers/properties/expectation.ts";

/*
 * One validation for what every subcommand (`expectations`, `plan`, `lab run`, …) and the run's environment
 * (CLUSTER_PROVIDER, CONFORMANCE_MODE, CILIUM_VERSION) take: the provider and mode here, the Cilium version
 * in versions.ts (resolveCilium; the lab maps a minor to its build with labCilium), the datapath profile in
 * datapath-profiles.ts (parseDatapathProfile). Each refuses in one line listing the valid values.
 */

export const PROVIDERS = ["kind", "k3d", "existing", "replay"] as const;
export type Provider = (typeof PROVIDERS)[number];

/** What CLUSTER_PROVIDER takes: the providers, and `none` (no cluster: every cluster spec skipped). */
export const RUN_PROVIDERS = [...PROVIDERS, "none"] as const;

/** A provider to plan or provision (kind when absent); `none` runs no cluster, so it has no plan. */
export function parseProvider(v: string | undefined): Provider {
  const p = v ?? "kind";
  if (p === "none")
    throw new UserError(
      `provider none runs no cluster (every cluster spec is skipped): nothing to plan; valid: ${PROVIDERS.join(", ")}`,
    );
  if (!PROVIDERS.includes(p as Provider))
    throw new UserError(`unknown provider ${JSON.stringify(p)}; valid: ${RUN_PROVIDERS.join(", ")}`);
  return p as Provider;
}

/** CLUSTER_PROVIDER's value: a provider or `none`. */
export function parseRunProvider(v: string): Provider | "none" {
  return v === "none" ? "none" : parseProvider(v);
}

/** A mode that must be given (`what` names where: `--mode`, `CONFORMANCE_MODE`). */
export function parseMode(v: string | undefined, what = "--mode"): Mode {
  if (v === undefined || v === "") throw new UserError(`${what} is required; valid: ${MODES.join(", ")}`);
  if (!MODES.includes(v as Mode))
    throw new UserError(`unknown mode ${JSON.stringify(v)}; valid: ${MODES.join(", ")}`);
  return v as Mode;
}

/** A mode that may be left out (both modes, or the one the agents report): undefined then. */
export function parseOptionalMode(v: string | undefined): Mode | undefined {
  return v === undefined ? undefined : parseMode(v);
}
