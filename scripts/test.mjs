#!/usr/bin/env node
// `npm test`: Biome first (seconds; a lint error stops here), then the type check and vitest side by side — tsc
// (TypeScript 7, the native compiler: 3.5 s of CPU where TypeScript 5.9 took 19 s) fills a core while vitest's
// tests wait on processes, timers and Chromium (issue 27: the run in a minute). tsc's report is printed after vitest's, whole; the exit code is
// the first failure's: Biome's, else tsc's, else vitest's. Arguments go to vitest (`npm test -- --project unit`).
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const require = createRequire(import.meta.url);
const bin = (pkg, rel) => join(dirname(require.resolve(`${pkg}/package.json`)), rel);

const biome = spawnSync(process.execPath, [bin("@biomejs/biome", "bin/biome"), "check", "."], {
  cwd: ROOT,
  stdio: "inherit",
});
if (biome.status !== 0) process.exit(biome.status ?? 1);

const started = Date.now();
const tscOut = [];
const tsc = spawn(process.execPath, [bin("typescript", "bin/tsc"), "--noEmit"], { cwd: ROOT });
tsc.stdout.on("data", (d) => tscOut.push(d));
tsc.stderr.on("data", (d) => tscOut.push(d));
const tscDone = new Promise((resolve) => tsc.on("close", (code) => resolve({ code, at: Date.now() })));

const vitest = spawn(process.execPath, [bin("vitest", "vitest.mjs"), "run", ...process.argv.slice(2)], {
  cwd: ROOT,
  stdio: "inherit",
});
const forward = (sig) => () => {
  vitest.kill(sig);
  tsc.kill(sig);
};
process.on("SIGINT", forward("SIGINT"));
process.on("SIGTERM", forward("SIGTERM"));
const vitestCode = await new Promise((resolve) =>
  vitest.on("close", (code, sig) => resolve(code ?? (sig ? 1 : 0))),
);
const t = await tscDone;
const text = Buffer.concat(tscOut).toString();
process.stdout.write(
  t.code === 0
    ? `tsc --noEmit: no type errors (${((t.at - started) / 1000).toFixed(1)} s, beside vitest)\n`
    : `\ntsc --noEmit: exit ${t.code}\n${text}`,
);
process.exit(t.code !== 0 ? (t.code ?? 1) : vitestCode);
