/**
 * Our bind probe: `timeout 2 nc -l ADDR PORT; echo exit=$?` in a node's host network namespace. A socket
 * hook that refuses the port makes nc fail at once ("Address already in use"); a port free to bind keeps nc
 * listening until `timeout` ends it (exit 124).
 */
export interface BindProbe {
  result: "EADDRINUSE" | "bound" | "error";
  exitCode: number | null;
  /** The line that decided it. */
  line: string;
}

export const BIND_PROBE_SECONDS = 2;

export function bindProbeArgv(address: string, port: number): string[] {
  return ["sh", "-c", `timeout ${BIND_PROBE_SECONDS} nc -l ${address} ${port} 2>&1; echo "exit=$?"`];
}

export function parseBindProbe(output: string): BindProbe {
  const lines = output
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const exitLine = [...lines].reverse().find((l) => /^exit=\d+$/.test(l));
  const exitCode = exitLine ? Number(exitLine.slice(5)) : null;
  const inUse = lines.find((l) => /Address (already )?in use/i.test(l));
  if (inUse) return { result: "EADDRINUSE", exitCode, line: inUse };
  if (exitCode === 124) return { result: "bound", exitCode, line: `listened until timeout (${exitLine})` };
  return { result: "error", exitCode, line: lines.join(" | ") || "(no output)" };
}
