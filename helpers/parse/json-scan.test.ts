import { describe, expect, it } from "vitest";
import { JsonScanError, jsonScan } from "./json-scan.ts";

// inputs WRITTEN BY US
describe("jsonScan: values with exact integers, and the line each value starts on", () => {
  const text = '{\n "a": [\n  1,\n  {"b": 2}\n ],\n "__proto__": {"x": 1},\n "c": 12345678901234567890\n}';

  it("a member's line is its name's; an element's is where it starts; no such path is null", () => {
    const r = jsonScan(text);
    expect(r.lineOf([])).toBe(1);
    expect(r.lineOf(["a"])).toBe(2);
    expect(r.lineOf(["a", 0])).toBe(3);
    expect(r.lineOf(["a", 1])).toBe(4);
    expect(r.lineOf(["a", "1", "b"])).toBe(4);
    expect(r.lineOf(["c"])).toBe(7);
    expect(r.lineOf(["zz"])).toBeNull();
    expect(r.lineOf(["a", 5])).toBeNull();
    expect(r.lineOf(["a", "x"])).toBeNull();
    expect(r.lineOf(["c", "d"])).toBeNull();
  });

  it("an integer past 2^53 keeps its printed decimal; `__proto__` is a member, never the prototype", () => {
    const v = jsonScan(text).value as Record<string, unknown>;
    expect(v.c).toBe("12345678901234567890");
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(["a", "__proto__", "c"]);
    expect(Object.getOwnPropertyDescriptor(v, "__proto__")?.value).toEqual({ x: 1 });
  });

  it("a later duplicate member wins, its line too (as JSON.parse keeps the last)", () => {
    const r = jsonScan('{\n "a": 1,\n "a": 2\n}');
    expect(r.value).toEqual({ a: 2 });
    expect(r.lineOf(["a"])).toBe(3);
  });

  it("elided lines are skipped and counted; the lines after keep their numbers", () => {
    const r = jsonScan("[\n  1,\n  ...\n  2\n]");
    expect(r.elided).toEqual([3]);
    expect(r.lineOf([1])).toBe(4);
  });

  it("what is not JSON fails with its line", () => {
    expect(() => jsonScan('{\n "a": 1,\n "b" 2\n}')).toThrow(JsonScanError);
    try {
      jsonScan('{\n "a": 1,\n "b" 2\n}');
    } catch (e) {
      expect((e as JsonScanError).line).toBe(3);
    }
  });
});
