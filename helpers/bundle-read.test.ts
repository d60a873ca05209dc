import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { BundleFault, invalidUtf8At, readBundleRaw } from "./bundle/files.ts";

const dir = mkdtempSync(join(tmpdir(), "dpc-bundle-read-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("readBundleRaw (outputs written by us)", () => {
  it("a gzipped output read again is the same text; rewritten, it is the new text, never the one read before", () => {
    const f = join(dir, "out.txt.gz");
    writeFileSync(f, gzipSync("first\n"));
    expect(readBundleRaw(dir, "out.txt.gz")).toBe("first\n");
    expect(readBundleRaw(dir, "out.txt.gz")).toBe("first\n");
    // same length, same moment: only the bytes tell them apart
    writeFileSync(f, gzipSync("again\n"));
    expect(readBundleRaw(dir, "out.txt.gz")).toBe("again\n");
    // the same bytes under another name read the same
    writeFileSync(join(dir, "copy.txt.gz"), gzipSync("again\n"));
    expect(readBundleRaw(dir, "copy.txt.gz")).toBe("again\n");
  });

  it("a corrupt gzip is refused each time it is read, naming the file", () => {
    writeFileSync(join(dir, "bad.txt.gz"), Buffer.from("not gzip at all"));
    for (let i = 0; i < 2; i++) {
      expect(() => readBundleRaw(dir, "bad.txt.gz")).toThrow(BundleFault);
      expect(() => readBundleRaw(dir, "bad.txt.gz")).toThrow(/bad\.txt\.gz: is not valid gzip/);
    }
  });

  it("a plain output is read as it is; an absent one is null", () => {
    writeFileSync(join(dir, "plain.txt"), "plain\n");
    expect(readBundleRaw(dir, "plain.txt")).toBe("plain\n");
    expect(readBundleRaw(dir, "absent.txt.gz")).toBeNull();
  });
});

describe("invalidUtf8At (a raw output that is not text is damaged evidence, issue 36)", () => {
  it("the offset of the first byte that is not UTF-8; -1 for text, multi-byte characters included", () => {
    expect(invalidUtf8At(Buffer.from("plain, é, 中, 😀\n"))).toBe(-1);
    const at = (hex: string) => invalidUtf8At(Buffer.concat([Buffer.from("ab"), Buffer.from(hex, "hex")]));
    expect(at("ff")).toBe(2); // never in UTF-8
    expect(at("c0af")).toBe(2); // an overlong "/"
    expect(at("eda080")).toBe(2); // a surrogate
    expect(at("f4908080")).toBe(2); // past U+10FFFF
    expect(at("e282")).toBe(2); // cut short
    expect(at("41c3a9c3")).toBe(5); // after a valid é, a lead byte alone
  });
});
