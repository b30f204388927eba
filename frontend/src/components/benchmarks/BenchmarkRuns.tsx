import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  type BenchmarkRun,
  benchmarkRunsQueryOptions,
  useCancelBenchmarkRun,
  useDeleteBenchmarkRun,
} from "@/api/benchmarks";
import { Button, Card, type Column, ProgressBar, QueryState, Select, Table } from "@/components/ui";
import { NewRunForm } from "./NewRunForm";
import { RunCharts } from "./RunCharts";
import { runSizes } from "./runCharts";

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
      <QueryState query={query} loading={false} retry={false} />
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
