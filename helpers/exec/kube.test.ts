import { describe, expect, it } from "vitest";
import { exitCodeFromStatus } from "./kube.ts";

describe("exec status channel", () => {
  it("Success is 0, NonZeroExitCode carries the code, anything else is a lost status", () => {
    expect(exitCodeFromStatus({ status: "Success" })).toBe(0);
    expect(
      exitCodeFromStatus({
        status: "Failure",
        reason: "NonZeroExitCode",
        details: { causes: [{ reason: "ExitCode", message: "7" }] },
      }),
    ).toBe(7);
    expect(exitCodeFromStatus({ status: "Failure", message: "container not found" })).toBeNull();
    expect(exitCodeFromStatus(undefined)).toBeNull();
  });
});
