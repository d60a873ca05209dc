import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { TestModule } from "vitest/node";
import { JUnitReporter } from "vitest/node";
import { xmlText } from "../output.ts";

type JUnitOptions = ConstructorParameters<typeof JUnitReporter>[0] & { outputFile: string };

/** A skip reason in the report: entities, and what XML 1.0 forbids (a bundle folder's \x01, \uFFFE) as U+FFFD. */
const escapeXml = xmlText;

/** The skip reasons of a run, by `classname\u0000full name` as the JUnit report names its test cases. */
export function skipNotes(modules: readonly TestModule[], root: string): Map<string, string> {
  const notes = new Map<string, string>();
  for (const m of modules) {
    const classname = m.moduleId.startsWith(`${root}/`) ? m.moduleId.slice(root.length + 1) : m.moduleId;
    for (const t of m.children.allTests()) {
      const r = t.result();
      if (r.state === "skipped" && r.note) notes.set(`${classname}\u0000${t.fullName}`, r.note);
    }
  }
  return notes;
}

/** Puts each skip reason into its test case's `<skipped/>` element (`message` and text), which vitest leaves empty. */
export function addSkipMessages(xml: string, notes: Map<string, string>): string {
  return xml.replace(
    /(<testcase classname="([^"]*)"[^>]*? name="([^"]*)"[^>]*>)(\s*)<skipped\/>/g,
    (whole, open: string, classname: string, name: string, space: string) => {
      const fromXml = (s: string) =>
        s
          .replace(/&quot;/g, '"')
          .replace(/&apos;/g, "'")
          .replace(/&lt;/g, "<")
          .replace(/&gt;/g, ">")
          .replace(/&amp;/g, "&");
      const note = notes.get(`${fromXml(classname)}\u0000${fromXml(name)}`);
      if (!note) return whole;
      return `${open}${space}<skipped message="${escapeXml(note)}">${escapeXml(note)}</skipped>`;
    },
  );
}

/** vitest's JUnit report, with every skip's reason (CI shows why a property was skipped, not only that it was). */
export default class JUnitWithSkipReasons extends JUnitReporter {
  private readonly file: string;
  private root = process.cwd();

  constructor(options: JUnitOptions) {
    super(options);
    this.file = options.outputFile;
  }

  override onInit(ctx: Parameters<JUnitReporter["onInit"]>[0]): Promise<void> {
    this.root = ctx.config.root;
    return super.onInit(ctx);
  }

  override async onTestRunEnd(...args: Parameters<JUnitReporter["onTestRunEnd"]>): Promise<void> {
    await super.onTestRunEnd(...args);
    const path = resolve(this.root, this.file);
    writeFileSync(path, addSkipMessages(readFileSync(path, "utf8"), skipNotes(args[0], this.root)));
  }
}
