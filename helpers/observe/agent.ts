import { mustRun } from "../exec/types.ts";
import type { RunContext } from "./context.ts";

/** `cilium-dbg …` in the agent on `node` (stdout; a non-zero exit is an ExecError naming the call). */
export async function ciliumDbg(ctx: RunContext, node: string, args: string[]): Promise<string> {
  return (await mustRun(ctx.exec, { target: { kind: "agent", node }, argv: ["cilium-dbg", ...args] })).stdout;
}

/** The agent image's bpftool (new enough to show tcx links, unlike Debian 12's 7.1). */
export async function agentBpftool(ctx: RunContext, node: string, args: string[]): Promise<string> {
  return (await mustRun(ctx.exec, { target: { kind: "agent", node }, argv: ["bpftool", ...args] })).stdout;
}
