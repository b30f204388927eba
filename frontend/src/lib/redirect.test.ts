// @vitest-environment node
import { describe, expect, it } from "vitest";
import { safeRedirect } from "./redirect";

describe("safeRedirect", () => {
  it("keeps paths on this site", () => {
    expect(safeRedirect("/settings")).toBe("/settings");
    expect(safeRedirect("/restores?state=pending#x")).toBe("/restores?state=pending#x");
  });

  it("refuses other sites, odd values and the login page itself", () => {
    expect(safeRedirect("https://evil.example/")).toBe("/");
    expect(safeRedirect("//evil.example/")).toBe("/");
    expect(safeRedirect("/\\evil.example")).toBe("/");
    expect(safeRedirect("/login?redirect=/x")).toBe("/");
    expect(safeRedirect(undefined)).toBe("/");
    expect(safeRedirect(42)).toBe("/");
  });
});
