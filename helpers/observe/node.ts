import type { ExecResult } from "../exec/types.ts";
import { mustRun } from "../exec/types.ts";
import { parseIptablesSave } from "../parse/iptables-save.ts";
import { RawText } from "../records/evidence.ts";
import type { RunContext } from "./context.ts";

export async function onNode(ctx: RunContext, node: string, argv: string[]): Promise<ExecResult> {
  return ctx.exec.run({ target: { kind: "node", node }, argv });
}

/**
 * iptables-save with the backend the node's rules were written with: `iptables-save` first, and when it
 * warns that legacy tables are present (rules written by iptables-legacy), the legacy dump as well.
 */
export async function iptablesSaveRaw(ctx: RunContext, node: string, counters = false): Promise<RawText> {
  const args = counters ? ["-c"] : [];
  const main = await mustRun(ctx.exec, { target: { kind: "node", node }, argv: ["iptables-save", ...args] });
  const warned = parseIptablesSave(main.stderr).warnings.some((w) => w.includes("legacy tables present"));
  if (!warned) return RawText.stdout(main);
  const legacy = await mustRun(ctx.exec, {
    target: { kind: "node", node },
    argv: ["iptables-legacy-save", ...args],
  });
  // each line keeps its own file
  return RawText.concat([RawText.stdout(main), RawText.stdout(legacy)]);
}

export async function iptablesSave(ctx: RunContext, node: string, counters = false): Promise<string> {
  return (await iptablesSaveRaw(ctx, node, counters)).text;
}
