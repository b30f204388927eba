import { describe, expect, it } from "vitest";
import { readCookie } from "./cookies";

describe("readCookie", () => {
  it("finds a cookie by exact name among others", () => {
    const jar = "a=1; tierpilot_csrf_old=x; tierpilot_csrf=abc%3D%3D; z=2";
    expect(readCookie("tierpilot_csrf", jar)).toBe("abc==");
  });

  it("answers null when the cookie is absent", () => {
    expect(readCookie("tierpilot_csrf", "a=1")).toBeNull();
    expect(readCookie("tierpilot_csrf", "")).toBeNull();
  });
});
