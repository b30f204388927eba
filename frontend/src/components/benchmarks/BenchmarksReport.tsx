import type { BenchmarkFigure, Benchmarks } from "@/api/benchmarks";
import { Card, type Column, EmptyState, Table } from "@/components/ui";
import "./benchmarks.css";

const number = new Intl.NumberFormat(undefined, { maximumSignificantDigits: 4 });

function baseline(f: BenchmarkFigure): string {
  if (!f.baseline) return "—";
  return f.baseline_value === null
    ? f.baseline
    : `${f.baseline}: ${number.format(f.baseline_value)} ${f.unit}`;
}

const columns: Array<Column<BenchmarkFigure>> = [
  {
    id: "what",
    header: "Measured",
    cell: (f) => (
      <div className="benchmarks-figure">
        <span>{f.what}</span>
        <small className="benchmarks-figure__how">
          <code>{f.command}</code>
          {f.machine || f.load ? ` on ${[f.machine, f.load].filter(Boolean).join(", ")}` : null}
        </small>
      </div>
    ),
  },
  { id: "value", header: "Value", align: "end", cell: (f) => `${number.format(f.value)} ${f.unit}` },
  { id: "baseline", header: "Compared with", cell: baseline },
  {
    id: "ratio",
    header: "Ratio",
    align: "end",
    cell: (f) => (f.ratio === null ? "—" : `${number.format(f.ratio)}×`),
  },
  { id: "date", header: "Measured on", cell: (f) => f.date },
];

/** The developers' reference figures: what was measured, against what, by which command, on which machine. */
export function BenchmarksReport({ figures, recorded_at: recordedAt }: Benchmarks) {
  return (
    <Card
      title="Reference figures"
      description={`Measured by the tierpilot developers with the bench/ scripts on their own machine, not on this installation; compare them with your runs above.${
        recordedAt ? ` Recorded ${new Date(recordedAt).toLocaleString()} (your local time).` : ""
      }`}
      padded={false}
    >
      <Table
        caption="Reference figures"
        columns={columns}
        rows={figures}
        rowKey={(f) => f.id}
        empty={
          <EmptyState
            title="No figures recorded yet"
            description="Run make bench on the machine that serves tierpilot; each script records its figures."
          />
        }
      />
    </Card>
  );
}
