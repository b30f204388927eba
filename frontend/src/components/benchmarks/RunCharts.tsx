import {
  Bar,
  BarChart,
  CartesianGrid,
  ComposedChart,
  Legend,
  Line,
  LineChart,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import type { BenchmarkRun } from "@/api/benchmarks";
import { Card, ChartFrame } from "@/components/ui";
import { bySize, formatSize, overlay, phaseRows, runSizes } from "./runCharts";
import "./benchmarks.css";

const PHASE_COLORS = [
  "#2563eb",
  "#0d9488",
  "#7c3aed",
  "#d97706",
  "#dc2626",
  "#4b5563",
  "#db2777",
  "#65a30d",
  "#0891b2",
];

/** A run's charts per object size: throughput, latency, where the time went, and another run overlaid. */
export function RunCharts({ run, compare }: { run: BenchmarkRun; compare: BenchmarkRun | null }) {
  const groups = bySize(run.points);
  return (
    <>
      {groups.map(({ size, points }) => {
        const { rows, phases } = phaseRows(points);
        return (
          <Card
            key={size}
            title={`Run ${run.id}: ${run.params.workload} of ${points[0]?.size_distribution ? runSizes(run) : formatSize(size)}`}
            level={3}
          >
            <div className="benchmarks-run-charts">
              <ChartFrame title="Throughput (ops/s) with failures and retries, by concurrency" height={220}>
                <ComposedChart data={points}>
                  <CartesianGrid strokeDasharray="3 3" />
                  <XAxis dataKey="concurrency" />
                  <YAxis yAxisId="ops" width={56} />
                  <YAxis yAxisId="count" orientation="right" width={40} allowDecimals={false} />
                  <Tooltip />
                  <Legend />
                  <Bar yAxisId="count" dataKey="failures" fill="#dc2626" isAnimationActive={false} />
                  <Bar yAxisId="count" dataKey="retries" fill="#d97706" isAnimationActive={false} />
                  <Line
                    yAxisId="ops"
                    dataKey="ops_per_s"
                    name="ops/s"
                    stroke="#2563eb"
                    isAnimationActive={false}
                  />
                </ComposedChart>
              </ChartFrame>
              <ChartFrame title="Latency percentiles (ms) and time to first byte" height={220}>
                <LineChart data={points}>
                  <CartesianGrid strokeDasharray="3 3" />
                  <XAxis dataKey="concurrency" />
                  <YAxis width={56} />
                  <Tooltip />
                  <Legend />
                  <Line dataKey="p50_ms" name="p50" stroke="#2563eb" isAnimationActive={false} />
                  <Line dataKey="p90_ms" name="p90" stroke="#7c3aed" isAnimationActive={false} />
                  <Line dataKey="p99_ms" name="p99" stroke="#dc2626" isAnimationActive={false} />
                  <Line dataKey="ttfb_p50_ms" name="TTFB p50" stroke="#0d9488" isAnimationActive={false} />
                </LineChart>
              </ChartFrame>
              <ChartFrame
                title="Where the time went: the gateway's median phase times (ms) of traced requests, per concurrency"
                height={220}
              >
                <BarChart data={rows}>
                  <CartesianGrid strokeDasharray="3 3" />
                  <XAxis dataKey="label" />
                  <YAxis width={56} />
                  <Tooltip />
                  <Legend />
                  {phases.map((phase, i) => (
                    <Bar
                      key={phase}
                      dataKey={phase}
                      stackId="phases"
                      fill={PHASE_COLORS[i % PHASE_COLORS.length]}
                      isAnimationActive={false}
                    />
                  ))}
                </BarChart>
              </ChartFrame>
              {compare ? (
                <ChartFrame
                  title={
                    <>
                      ops/s of run {run.id} and run {compare.id} at {formatSize(size)}
                    </>
                  }
                  height={220}
                >
                  <LineChart
                    data={overlay(
                      points,
                      compare.points.filter((p) => p.object_size === size),
                    )}
                  >
                    <CartesianGrid strokeDasharray="3 3" />
                    <XAxis dataKey="concurrency" />
                    <YAxis width={56} />
                    <Tooltip />
                    <Legend />
                    <Line dataKey="a" name={`run ${run.id}`} stroke="#2563eb" isAnimationActive={false} />
                    <Line dataKey="b" name={`run ${compare.id}`} stroke="#d97706" isAnimationActive={false} />
                  </LineChart>
                </ChartFrame>
              ) : null}
            </div>
          </Card>
        );
      })}
    </>
  );
}
