import { describe, expect, it } from "vitest";
import { formatMs, slowestPhase, waterfallBars } from "./waterfall";

const phases = [
  { name: "headers", start_ms: 0, duration_ms: 1 },
  { name: "auth", start_ms: 1, duration_ms: 4 },
  { name: "transfer", start_ms: 5, duration_ms: 95 },
];

describe("waterfallBars", () => {
  it("places each phase on the request's time axis", () => {
    const bars = waterfallBars(phases, 100);
    expect(bars.map((b) => [b.name, b.left, b.width])).toEqual([
      ["headers", 0, 1],
      ["auth", 1, 4],
      ["transfer", 5, 95],
    ]);
    expect(bars.reduce((sum, b) => sum + b.share, 0)).toBeCloseTo(1);
  });

  it("keeps a phase far shorter than the total visible as a hairline", () => {
    const [bar] = waterfallBars([{ name: "auth", start_ms: 0, duration_ms: 0.001 }], 1000);
    expect(bar?.width).toBe(0.3);
  });
});

describe("slowestPhase", () => {
  it("names where most of the time went", () => {
    expect(slowestPhase(phases)?.name).toBe("transfer");
    expect(slowestPhase([])).toBeNull();
  });
});

describe("formatMs", () => {
  it("switches units with the magnitude", () => {
    expect(formatMs(0.25)).toBe("0.25 ms");
    expect(formatMs(42)).toBe("42 ms");
    expect(formatMs(2500)).toBe("2.50 s");
  });
});
