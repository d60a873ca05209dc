import { mustRun } from "../exec/types.ts";
import { RawText } from "../records/evidence.ts";
import type { RunContext } from "./context.ts";

/** `cilium-dbg …` in the agent on `node`: its stdout at its place in the bundle (a non-zero exit is an ExecError naming the call). */
export async function ciliumDbgRaw(
  ctx: RunContext,
  node: string,
  args: string[],
  timeoutMs?: number,
): Promise<RawText> {
  return RawText.stdout(
    await mustRun(ctx.exec, {
      target: { kind: "agent", node },
      argv: ["cilium-dbg", ...args],
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    }),
  );
}

/** `cilium-dbg …` in the agent on `node` (stdout only). */
export async function ciliumDbg(ctx: RunContext, node: string, args: string[]): Promise<string> {
  return (await ciliumDbgRaw(ctx, node, args)).text;
}

/** The agent image's bpftool (new enough to show tcx links, unlike Debian 12's 7.1). */
export async function agentBpftool(ctx: RunContext, node: string, args: string[]): Promise<RawText> {
  return RawText.stdout(
    await mustRun(ctx.exec, { target: { kind: "agent", node }, argv: ["bpftool", ...args] }),
  );
}
