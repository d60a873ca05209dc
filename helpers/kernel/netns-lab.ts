import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { LocalExecutor } from "../exec/local.ts";
import type { ExecRequest, ExecResult, Executor } from "../exec/types.ts";
import { which } from "../which.ts";

/**
 * Two network namespaces joined by a veth pair, made for one test file and removed after it: `a`
 * (10.200.N.1) and `b` (10.200.N.2). Neither has a default route, so nothing they send can leave the
 * machine; the host namespace is never used to dial these addresses.
 */
export class NetnsLab {
  readonly a: string;
  readonly b: string;
  readonly ipA: string;
  readonly ipB: string;
  readonly devA: string;
  readonly devB: string;
  private readonly local = new LocalExecutor();
  private readonly children: ChildProcess[] = [];

  private constructor(
    readonly id: string,
    n: number,
  ) {
    this.a = `dpc-${id}-a`;
    this.b = `dpc-${id}-b`;
    this.devA = `dpca${id}`.slice(0, 15);
    this.devB = `dpcb${id}`.slice(0, 15);
    this.ipA = `10.200.${n}.1`;
    this.ipB = `10.200.${n}.2`;
  }

  /** Why the kernel lab cannot run here, or null. */
  static unavailable(tools: string[] = ["ip"]): string | null {
    if (process.getuid?.() !== 0) return "the kernel lab needs root (network namespaces, iptables, BPF)";
    const missing = tools.filter((t) => which(t) === null);
    if (missing.length > 0) return `missing ${missing.join(", ")} (\`.ci/run\` installs them with apt-get)`;
    return tools.includes("bpftool") ? bpftoolBroken() : null;
  }

  static async create(): Promise<NetnsLab> {
    const n = 1 + (process.pid % 200);
    const id = `${process.pid % 100000}${Math.floor(Math.random() * 90 + 10)}`;
    const lab = new NetnsLab(id, n);
    const steps = [
      ["ip", "netns", "add", lab.a],
      ["ip", "netns", "add", lab.b],
      ["ip", "link", "add", lab.devA, "type", "veth", "peer", "name", lab.devB],
      ["ip", "link", "set", lab.devA, "netns", lab.a],
      ["ip", "link", "set", lab.devB, "netns", lab.b],
      ["ip", "-n", lab.a, "addr", "add", `${lab.ipA}/24`, "dev", lab.devA],
      ["ip", "-n", lab.b, "addr", "add", `${lab.ipB}/24`, "dev", lab.devB],
      ["ip", "-n", lab.a, "link", "set", lab.devA, "up"],
      ["ip", "-n", lab.b, "link", "set", lab.devB, "up"],
      ["ip", "-n", lab.a, "link", "set", "lo", "up"],
      ["ip", "-n", lab.b, "link", "set", "lo", "up"],
    ];
    try {
      for (const argv of steps) await lab.host(argv);
    } catch (err) {
      await lab.destroy();
      throw err;
    }
    return lab;
  }

  /** A command in the host namespace (only `ip`, `tc`, `bpftool`… that manage the lab, never traffic). */
  async host(argv: string[]): Promise<ExecResult> {
    const r = await this.local.run({ target: { kind: "local" }, argv });
    if (r.exitCode !== 0) throw new Error(`\`${argv.join(" ")}\` exited ${r.exitCode}: ${r.stderr.trim()}`);
    return r;
  }

  run(ns: string, argv: string[], opts: Partial<ExecRequest> = {}): Promise<ExecResult> {
    return this.local.run({ ...opts, target: { kind: "local", netns: ns }, argv });
  }

  async must(ns: string, argv: string[]): Promise<ExecResult> {
    const r = await this.run(ns, argv);
    if (r.exitCode !== 0)
      throw new Error(`[${ns}] \`${argv.join(" ")}\` exited ${r.exitCode}: ${r.stderr.trim()}`);
    return r;
  }

  /** An HTTP server inside `ns` on `port` (node, bound to all addresses of that namespace). */
  async httpServer(ns: string, port: number): Promise<void> {
    const code = `require("http").createServer((q,s)=>{s.end("hello from "+${JSON.stringify(ns)})}).listen(${port},"0.0.0.0",()=>console.log("listening"))`;
    const child = spawn("ip", ["netns", "exec", ns, process.execPath, "-e", code], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.children.push(child);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`HTTP server in ${ns} did not start`)), 10_000);
      child.stdout?.on("data", (d: Buffer) => {
        if (d.toString().includes("listening")) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on("exit", (c) => reject(new Error(`HTTP server in ${ns} exited ${c}`)));
    });
  }

  /** An Executor whose `node` targets are a namespace of this lab (the NodeShell the observers use). */
  nodeShell(ns: string): Executor {
    return {
      run: (req) => {
        if (req.target.kind !== "node")
          throw new Error(`the kernel lab only serves node targets, not ${req.target.kind}`);
        return this.run(ns, req.argv, req);
      },
    };
  }

  async destroy(): Promise<void> {
    for (const c of this.children) c.kill("SIGKILL");
    for (const ns of [this.a, this.b])
      await this.local.run({ target: { kind: "local" }, argv: ["ip", "netns", "del", ns] });
  }
}

/**
 * Why the bpftool on PATH does not run, or null. Ubuntu's linux-tools-common installs a `bpftool` that only
 * execs the build for the running kernel (linux-tools-$(uname -r)) and otherwise prints a warning and fails.
 */
function bpftoolBroken(): string | null {
  const r = spawnSync("bpftool", ["version"], { encoding: "utf8", timeout: 10_000 });
  if (r.status === 0) return null;
  const said =
    `${r.stderr ?? ""}${r.stdout ?? ""}`.trim().split("\n")[0] || r.error?.message || `exit ${r.status}`;
  return `bpftool on PATH does not run here: ${said} (Ubuntu: apt-get install linux-tools-$(uname -r))`;
}
