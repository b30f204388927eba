import { describe, expect, it } from "vitest";
import type { BenchmarkPoint } from "@/api/benchmarks";
import { bySize, formatSize, overlay, parseList, parseRatios, parseSizes, phaseRows } from "./runCharts";

function point(
  size: number,
  concurrency: number,
  ops: number,
  phases: Record<string, number> = {},
): BenchmarkPoint {
  return {
    workload: "put",
    object_size: size,
    concurrency,
    ops_per_s: ops,
    mb_per_s: 0,
    failures: 0,
    retries: 0,
    p50_ms: 1,
    p90_ms: 2,
    p99_ms: 3,
    ttfb_p50_ms: 1,
    phases_ms: phases,
    size_distribution: "",
    traced: 0,
  };
}

describe("run charts", () => {
  it("parses comma lists and refuses what is not a whole number of at least 1", () => {
    expect(parseList("1, 4,16")).toEqual([1, 4, 16]);
    expect(parseList("1,0")).toBeNull();
    expect(parseList("1.5")).toBeNull();
    expect(parseList("")).toBeNull();
  });

  it("parses sizes as a list or a LOW-HIGH range, and mixed-workload ratios", () => {
    expect(parseSizes("1024, 2048")).toEqual({ object_sizes: [1024, 2048] });
    expect(parseSizes("1024-1048576")).toEqual({ size_distribution: { min: 1024, max: 1048576 } });
    expect(parseSizes("2048-1024")).toBeNull();
    expect(parseSizes("0-10")).toBeNull();
    expect(parseRatios("put=0.2, get=0.7,head=0.1")).toEqual({ put: 0.2, get: 0.7, head: 0.1 });
    expect(parseRatios("copy=1")).toBeNull();
    expect(parseRatios("put=-1")).toBeNull();
    expect(parseRatios("put=0")).toBeNull();
    expect(parseRatios("put")).toBeNull();
  });

  it("groups points by object size, ordered by concurrency", () => {
    const groups = bySize([point(1024, 4, 10), point(1 << 20, 1, 5), point(1024, 1, 20)]);
    expect(groups.map((g) => [g.size, g.points.map((p) => p.concurrency)])).toEqual([
      [1024, [1, 4]],
      [1 << 20, [1]],
    ]);
  });

  it("stacks the union of phases and overlays two runs by concurrency", () => {
    const { rows, phases } = phaseRows([point(1, 1, 1, { auth: 1 }), point(1, 4, 1, { auth: 2, commit: 5 })]);
    expect(phases).toEqual(["auth", "commit"]);
    expect(rows[1]).toEqual({ label: "4", auth: 2, commit: 5 });
    expect(overlay([point(1, 1, 10)], [point(1, 1, 12), point(1, 4, 30)])).toEqual([
      { concurrency: 1, a: 10, b: 12 },
      { concurrency: 4, b: 30 },
    ]);
    expect(formatSize(1024)).toBe("1 KiB");
  });
});
