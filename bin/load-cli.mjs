// How bin/datapath-conformance.mjs loads the TypeScript CLI without a build step.
//
// Through tsx every module crosses the loader-hooks thread (about 90 of ours for `check`), which was half of a
// command's time. So the first run after a change bundles cli/main.ts and what it imports into one file with
// esbuild (the transform tsx itself uses; packages stay external), and later runs import that file directly.
// The bundle is keyed by the content of every source file it was built from (esbuild's metafile): any change
// to one of them, or a different esbuild, rebuilds it. `import.meta.dirname`/`url` keep their file's own
// value. Where esbuild or the cache folder is unavailable, or DATAPATH_CONFORMANCE_TSX=1, tsx loads the
// sources as before.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const ROOT = join(import.meta.dirname, "..");
const ENTRY = join(ROOT, "cli", "main.ts");

function sha1(text) {
  return createHash("sha1").update(text).digest("hex");
}

/** The bundle's manifest still matches: the same esbuild and every input file byte for byte. */
function fresh(manifest, esbuildVersion) {
  if (!manifest || manifest.esbuild !== esbuildVersion || manifest.entry !== ENTRY) return false;
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

async function bundle(esbuild, out, manifestFile) {
  const result = await esbuild.build({
    entryPoints: [ENTRY],
    absWorkingDir: ROOT,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    write: false,
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
  // written aside and renamed: two commands starting at once never read half a file
  const tmp = `${out}.${process.pid}.tmp`;
  writeFileSync(tmp, result.outputFiles[0].contents);
  renameSync(tmp, out);
  writeFileSync(
    `${manifestFile}.${process.pid}.tmp`,
    JSON.stringify({ esbuild: esbuild.version, entry: ENTRY, inputs }),
  );
  renameSync(`${manifestFile}.${process.pid}.tmp`, manifestFile);
}

/** `{ main, how }`: how is `bundle` (cached), `bundle-built` or `tsx`; DATAPATH_CONFORMANCE_DEBUG=1 prints it. */
export async function loadCli(
  cacheDir = process.env.DATAPATH_CONFORMANCE_CACHE ??
    join(ROOT, "node_modules", ".cache", "datapath-conformance"),
) {
  if (process.env.DATAPATH_CONFORMANCE_TSX !== "1") {
    try {
      const esbuild = await import("esbuild");
      const out = join(cacheDir, "cli.mjs");
      const manifestFile = join(cacheDir, "cli.json");
      let manifest;
      try {
        manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
      } catch {
        manifest = undefined;
      }
      let how = "bundle";
      if (!fresh(manifest, esbuild.version)) {
        mkdirSync(cacheDir, { recursive: true });
        await bundle(esbuild, out, manifestFile);
        how = "bundle-built";
      }
      const { main } = await import(pathToFileURL(out).href);
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
