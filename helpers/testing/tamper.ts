/** Test helper: copies of the shipped bundles with one recorded output edited, to prove checks can fail. */

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { isCompressed, readRawFile } from "../exec/raw-file.ts";
import type { CallRecord } from "../exec/record.ts";
import { curlArgv } from "../parse/curl.ts";

/** The ghost probe's curl as the observers run it (the replay key). */
export const BUNDLES_DIR = join(import.meta.dirname, "..", "..", "suites", "bundles");
/** The minor whose recorded bundles the tests read as fixtures (real outputs, both modes, every topic). */
export const FIXTURE_MINOR = "1.19";
/** A shipped bundle the tests read: `kpr`, `kube-proxy`, `drop-kpr`… of FIXTURE_MINOR, or a path under bundles/. */
export const shipped = (name: string) =>
  name.includes("/") ? join(BUNDLES_DIR, name) : join(BUNDLES_DIR, FIXTURE_MINOR, name);

/** The ghost Service's ClusterIP as the shipped kube-proxy bundle recorded it. */
const ghostIp = (
  JSON.parse(readFileSync(join(shipped("kube-proxy"), "records", "ghost.json"), "utf8")) as {
    cluster_ip: string;
  }
).cluster_ip;
export const GHOST_CURL = curlArgv(`http://${ghostIp}/`);

/** A kube-proxy rule for the web ClusterIP of the shipped kpr bundle (as kube-proxy would write it). */
const webIp = (
  JSON.parse(readFileSync(join(shipped("kpr"), "records", "iptables.json"), "utf8")) as {
    cluster_ip: string;
  }
).cluster_ip;
export const KUBE_SVC_LINE = `-A KUBE-SERVICES -d ${webIp}/32 -p tcp -m comment --comment "cca-dp/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-XGLOHA7QRQ3V22RZ`;

export class BundleCopies {
  private readonly root = mkdtempSync(join(tmpdir(), "dpc-bundles-"));
  private n = 0;

  copy(mode: string): string {
    const dir = join(this.root, `${mode}-${++this.n}`);
    cpSync(shipped(mode), dir, { recursive: true });
    return dir;
  }

  /** A copy whose recorded stdout of `argv` (in `topic`) is replaced by `edit(stdout)`. */
  tampered(mode: string, topic: string, argv: string[], edit: (text: string) => string): string {
    const dir = this.copy(mode);
    const calls = readFileSync(join(dir, "calls", `${topic}.jsonl`), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as CallRecord);
    const call = calls.find((c) => JSON.stringify(c.argv) === JSON.stringify(argv));
    if (!call) throw new Error(`no ${argv.join(" ")} in ${topic}`);
    const file = join(dir, call.stdoutFile);
    const edited = edit(readRawFile(file));
    if (isCompressed(file)) writeFileSync(file, gzipSync(edited));
    else writeFileSync(file, edited);
    return dir;
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** A bundle's JSON Lines file, each line edited by `edit` (return undefined to keep it); written back. */
export function editJsonLines(
  dir: string,
  rel: string,
  edit: (value: Record<string, unknown>, index: number) => Record<string, unknown> | undefined,
): void {
  const path = join(dir, rel);
  const lines = readFileSync(path, "utf8").trimEnd().split("\n");
  writeFileSync(
    path,
    `${lines.map((l, i) => JSON.stringify(edit(JSON.parse(l) as Record<string, unknown>, i) ?? JSON.parse(l))).join("\n")}\n`,
  );
}

/** A bundle's JSON file, edited by `edit`; written back. */
export function editJson(dir: string, rel: string, edit: (value: Record<string, unknown>) => unknown): void {
  const path = join(dir, rel);
  writeFileSync(path, `${JSON.stringify(edit(JSON.parse(readFileSync(path, "utf8"))), null, 2)}\n`);
}
