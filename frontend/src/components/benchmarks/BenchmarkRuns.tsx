import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  Bar,
  BarChart,
  CartesianGrid,
  ComposedChart,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import {
  type BenchmarkRun,
  benchmarkRunsQueryOptions,
  useCancelBenchmarkRun,
  useCreateBenchmarkRun,
  useDeleteBenchmarkRun,
} from "@/api/benchmarks";
import { Button, Card, type Column, ErrorBanner, Input, ProgressBar, Select, Table } from "@/components/ui";
import { bySize, formatSize, overlay, parseList, parseRatios, parseSizes, phaseRows } from "./runCharts";

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

/** A run's sizes as asked: the list, or the range sizes were drawn from. */
function runSizes(run: BenchmarkRun): string {
  const range = run.params.size_distribution as { min: number; max: number } | null | undefined;
  if (range) return `${formatSize(range.min)}–${formatSize(range.max)}`;
  return ((run.params.object_sizes as number[] | undefined) ?? []).map(formatSize).join(", ");
}

const WORKLOADS = [
  { value: "put", label: "PUT" },
  { value: "get", label: "GET" },
  { value: "head", label: "HEAD" },
  { value: "list", label: "LIST" },
  { value: "delete", label: "DELETE" },
  { value: "mixed", label: "Mixed" },
];

function NewRunForm() {
  const create = useCreateBenchmarkRun();
  const [workload, setWorkload] = useState("put");
  const [sizes, setSizes] = useState("1024,1048576");
  const [ratios, setRatios] = useState("put=0.2,get=0.7,head=0.1");
  const [concurrency, setConcurrency] = useState("1,4,16,64");
  const [seconds, setSeconds] = useState("5");
  const [reservation, setReservation] = useState("");
  const sizeSpec = parseSizes(sizes);
  const concList = parseList(concurrency);
  const mixed = workload === "mixed";
  const shares = mixed ? parseRatios(ratios) : null;
  const secs = Number(seconds);
  const valid = sizeSpec !== null && concList !== null && secs > 0 && (!mixed || shares !== null);
  return (
    <Card
      title="New run"
      description="A sweep through the gateway with your own S3 key, in a scratch bucket removed after (with a reservation: under a scratch prefix of its bucket)."
    >
      <form
        className="benchmarks-run-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!valid || !sizeSpec || !concList) return;
          create.mutate({
            workload,
            ...sizeSpec,
            concurrency: concList,
            seconds_per_point: secs,
            ...(mixed && shares ? { ratios: shares } : {}),
            ...(reservation.trim() ? { reservation_id: reservation.trim() } : {}),
          });
        }}
      >
        <Select
          label="Workload"
          value={workload}
          onChange={(e) => setWorkload(e.target.value)}
          options={WORKLOADS}
        />
        {mixed ? (
          <Input
            label="Ratios"
            value={ratios}
            onChange={(e) => setRatios(e.target.value)}
            error={shares ? undefined : "name=share pairs of put, get, head, list, delete"}
          />
        ) : null}
        <Input
          label="Object sizes (bytes)"
          value={sizes}
          onChange={(e) => setSizes(e.target.value)}
          error={
            sizeSpec ? undefined : "comma-separated whole numbers, or LOW-HIGH for sizes drawn between them"
          }
        />
        <Input
          label="Concurrency"
          value={concurrency}
          onChange={(e) => setConcurrency(e.target.value)}
          error={concList ? undefined : "whole numbers of at least 1, comma-separated"}
        />
        <Input
          label="Seconds per point"
          type="number"
          min={0.2}
          step={0.1}
          value={seconds}
          onChange={(e) => setSeconds(e.target.value)}
        />
        <Input
          label="Reservation id (optional)"
          value={reservation}
          placeholder="rsv_…"
          onChange={(e) => setReservation(e.target.value)}
        />
        <Button type="submit" variant="primary" loading={create.isPending} disabled={!valid}>
          Start run
        </Button>
      </form>
      {create.isError ? <ErrorBanner error={create.error} /> : null}
    </Card>
  );
}

function RunCharts({ run, compare }: { run: BenchmarkRun; compare: BenchmarkRun | null }) {
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
              <figure>
                <figcaption>Throughput (ops/s) with failures and retries, by concurrency</figcaption>
                <ResponsiveContainer width="100%" height={220}>
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
                </ResponsiveContainer>
              </figure>
              <figure>
                <figcaption>Latency percentiles (ms) and time to first byte</figcaption>
                <ResponsiveContainer width="100%" height={220}>
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
                </ResponsiveContainer>
              </figure>
              <figure>
                <figcaption>
                  Where the time went: the gateway's median phase times (ms) of traced requests, per
                  concurrency
                </figcaption>
                <ResponsiveContainer width="100%" height={220}>
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
                </ResponsiveContainer>
              </figure>
              {compare ? (
                <figure>
                  <figcaption>
                    ops/s of run {run.id} and run {compare.id} at {formatSize(size)}
                  </figcaption>
                  <ResponsiveContainer width="100%" height={220}>
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
                      <Line
                        dataKey="b"
                        name={`run ${compare.id}`}
                        stroke="#d97706"
                        isAnimationActive={false}
                      />
                    </LineChart>
                  </ResponsiveContainer>
                </figure>
              ) : null}
            </div>
          </Card>
        );
      })}
    </>
  );
}

/** The user's benchmark runs: start one, watch its progress, chart it, compare two, export, cancel, delete. */
export function BenchmarkRuns() {
  const query = useQuery(benchmarkRunsQueryOptions());
  const cancel = useCancelBenchmarkRun();
  const remove = useDeleteBenchmarkRun();
  const [selectedId, setSelectedId] = useState<number | null>(null);
  const [compareId, setCompareId] = useState<string>("");
  const items = query.data?.items ?? [];
  const selected = items.find((r) => r.id === selectedId) ?? items.find((r) => r.points.length > 0) ?? null;
  const compare = items.find((r) => String(r.id) === compareId && r.id !== selected?.id) ?? null;

  const columns: Array<Column<BenchmarkRun>> = [
    { id: "id", header: "Run", cell: (r) => r.id },
    {
      id: "what",
      header: "Sweep",
      cell: (r) => `${r.params.workload} · ${runSizes(r)}`,
    },
    {
      id: "state",
      header: "State",
      cell: (r) =>
        r.state === "running" ? (
          <ProgressBar value={Math.round(r.progress * 100)} max={100} label={`Run ${r.id}`} />
        ) : (
          r.state
        ),
    },
    {
      id: "actions",
      header: <span className="visually-hidden">Actions</span>,
      label: "Actions",
      cell: (r) => (
        <div className="row">
          <Button size="sm" onClick={() => setSelectedId(r.id)} disabled={!r.points.length}>
            Charts
          </Button>
          {r.state === "queued" || r.state === "running" ? (
            <Button size="sm" onClick={() => cancel.mutate(r.id)}>
              Cancel
            </Button>
          ) : (
            <>
              <a
                className="ui-button ui-button--ghost ui-button--sm"
                href={`/api/benchmarks/runs/${r.id}/export?format=csv`}
              >
                CSV
              </a>
              <a
                className="ui-button ui-button--ghost ui-button--sm"
                href={`/api/benchmarks/runs/${r.id}/export?format=json`}
              >
                JSON
              </a>
              <Button size="sm" variant="danger" onClick={() => remove.mutate(r.id)}>
                Delete
              </Button>
            </>
          )}
        </div>
      ),
    },
  ];

  return (
    <>
      <NewRunForm />
      {query.isError ? <ErrorBanner error={query.error} /> : null}
      <Card title="Your runs" padded={false}>
        <Table
          caption="Benchmark runs"
          columns={columns}
          rows={items}
          rowKey={(r) => r.id}
          empty="No runs yet."
        />
      </Card>
      {selected ? (
        <>
          <Card title="Compare">
            <Select
              label="Overlay another run"
              value={compareId}
              onChange={(e) => setCompareId(e.target.value)}
              options={[
                { value: "", label: "none" },
                ...items
                  .filter((r) => r.id !== selected.id && r.points.length)
                  .map((r) => ({ value: String(r.id), label: `run ${r.id}` })),
              ]}
            />
          </Card>
          <RunCharts run={selected} compare={compare} />
        </>
      ) : null}
    </>
  );
}
