// How bin/datapath-conformance.mjs loads the TypeScript CLI without a build step.
//
// Through tsx every module crosses the loader-hooks thread (about 90 of ours for `check`), which was half of a
// command's time. So the first run after a change bundles cli/main.ts and what it imports with esbuild (the
// transform tsx itself uses; packages stay external) into a folder of ES modules, split at every dynamic
// import: a command loads only its own chunks, and the packages they import (`--version` loads neither the
// topics nor yaml; `check` never loads @kubernetes/client-node). Later runs import that folder's entry directly.
// The bundle is keyed by the content of every source file it was built from (esbuild's metafile): any change
// to one of them, or a different esbuild, rebuilds it. Whether it is fresh is decided without importing esbuild
// (its version is read from its package.json): importing it cost 0.2-0.3 s of CPU on every start.
// `import.meta.dirname`/`url` keep their file's own value. Where esbuild or the cache folder is unavailable, or
// DATAPATH_CONFORMANCE_TSX=1, tsx loads the sources as before.
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const ROOT = join(import.meta.dirname, "..");
const ENTRY = join(ROOT, "cli", "main.ts");
const require = createRequire(import.meta.url);

function sha1(text) {
  return createHash("sha1").update(text).digest("hex");
}

/** The installed esbuild's version, read from its package.json (importing esbuild costs 0.2-0.3 s of CPU). */
function esbuildVersion() {
  return JSON.parse(readFileSync(require.resolve("esbuild/package.json"), "utf8")).version;
}

/** The bundle's manifest still matches: its folder is there, the same esbuild, every input file byte for byte. */
function fresh(manifest, version, cacheDir) {
  if (!manifest || manifest.esbuild !== version || manifest.entry !== ENTRY || !manifest.dir) return false;
  if (!existsSync(join(cacheDir, manifest.dir, "main.mjs"))) return false;
  for (const [file, hash] of Object.entries(manifest.inputs)) {
    let text;
    try {
      text = readFileSync(join(ROOT, file));
    } catch {
      return false;
    }
    if (sha1(text) !== hash) return false;
  }
  return true;
}

/** Bundles into a new folder `cli-<hash of the inputs>` and points the manifest at it; returns the manifest. */
async function bundle(cacheDir, manifestFile) {
  const esbuild = await import("esbuild");
  const tmp = join(cacheDir, `tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { main: ENTRY },
    absWorkingDir: ROOT,
    bundle: true,
    splitting: true,
    outdir: tmp,
    outExtension: { ".js": ".mjs" },
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    metafile: true,
    logLevel: "silent",
    plugins: [
      {
        name: "import-meta-of-each-file",
        setup(build) {
          build.onLoad({ filter: /\.ts$/ }, (args) => {
            const src = readFileSync(args.path, "utf8");
            return {
              loader: "ts",
              contents: src
                .replaceAll("import.meta.dirname", JSON.stringify(dirname(args.path)))
                .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)),
            };
          });
        },
      },
    ],
  });
  const inputs = {};
  for (const file of Object.keys(result.metafile.inputs)) inputs[file] = sha1(readFileSync(join(ROOT, file)));
  const dir = `cli-${sha1(JSON.stringify([esbuild.version, inputs])).slice(0, 16)}`;
  // built aside and renamed: two commands starting at once never read half a bundle
  try {
    renameSync(tmp, join(cacheDir, dir));
  } catch {
    // another command built the same bundle first: use it
    rmSync(tmp, { recursive: true, force: true });
  }
  const manifest = { esbuild: esbuild.version, entry: ENTRY, dir, inputs };
  writeFileSync(`${manifestFile}.${process.pid}.tmp`, JSON.stringify(manifest));
  renameSync(`${manifestFile}.${process.pid}.tmp`, manifestFile);
  // older bundles go once nothing can still be loading their chunks (a command loads them as it runs)
  for (const old of readdirSync(cacheDir)) {
    if (old === dir || !/^(cli-|tmp-)/.test(old)) continue;
    try {
      if (Date.now() - statSync(join(cacheDir, old)).mtimeMs > 3_600_000)
        rmSync(join(cacheDir, old), { recursive: true, force: true });
    } catch {
      // gone already
    }
  }
  return manifest;
}

/** The bundle cache of this checkout (DATAPATH_CONFORMANCE_CACHE when set). */
export function defaultCacheDir() {
  // one folder per checkout: worktrees that share a node_modules do not rebuild each other's bundle
  return (
    process.env.DATAPATH_CONFORMANCE_CACHE ??
    join(ROOT, "node_modules", ".cache", "datapath-conformance", sha1(ROOT).slice(0, 12))
  );
}

/**
 * The bundle's entry file, built first when it is missing or stale; `built` says whether this call built it.
 * Throws where esbuild or the cache folder is unavailable (loadCli then takes tsx).
 */
export async function freshBundle(cacheDir = defaultCacheDir()) {
  const manifestFile = join(cacheDir, "cli.json");
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
  } catch {
    manifest = undefined;
  }
  let built = false;
  if (!fresh(manifest, esbuildVersion(), cacheDir)) {
    mkdirSync(cacheDir, { recursive: true });
    manifest = await bundle(cacheDir, manifestFile);
    built = true;
  }
  return { entry: join(cacheDir, manifest.dir, "main.mjs"), built };
}

/** `{ main, how }`: how is `bundle` (cached), `bundle-built` or `tsx`; DATAPATH_CONFORMANCE_DEBUG=1 prints it. */
export async function loadCli(cacheDir = defaultCacheDir()) {
  if (process.env.DATAPATH_CONFORMANCE_TSX !== "1") {
    try {
      const { entry, built } = await freshBundle(cacheDir);
      const how = built ? "bundle-built" : "bundle";
      const { main } = await import(pathToFileURL(entry).href);
      if (process.env.DATAPATH_CONFORMANCE_DEBUG === "1") process.stderr.write(`cli: ${how}\n`);
      return { main, how };
    } catch (err) {
      if (process.env.DATAPATH_CONFORMANCE_DEBUG === "1")
        process.stderr.write(
          `cli: no bundle (${err instanceof Error ? err.message.split("\n")[0] : err}); tsx\n`,
        );
    }
  }
  const { register } = await import("tsx/esm/api");
  register();
  const { main } = await import(pathToFileURL(ENTRY).href);
  if (process.env.DATAPATH_CONFORMANCE_DEBUG === "1") process.stderr.write("cli: tsx\n");
  return { main, how: "tsx" };
}
