import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { BenchmarkFigure } from "@/api/benchmarks";
import { BenchmarksReport } from "./BenchmarksReport";

const figure: BenchmarkFigure = {
  id: "gateway-get-8",
  what: "GET through the gateway, 8 clients",
  value: 1210,
  unit: "MB/s",
  baseline: "raw disk read",
  baseline_value: 1494,
  ratio: 0.81,
  command: "python bench/gateway_throughput.py",
  machine: "2-core VM",
  load: "idle",
  date: "2026-11-22",
};

describe("BenchmarksReport", () => {
  it("lists each figure with its unit, baseline, ratio and date, the command in small print", () => {
    render(<BenchmarksReport figures={[figure]} recorded_at="2026-11-22T03:00:00Z" />);
    expect(screen.getByRole("heading", { name: "Reference figures" })).toBeInTheDocument();
    const table = screen.getByRole("table", { name: "Reference figures" });
    const row = within(table).getAllByRole("row")[1] as HTMLElement;
    expect(within(row).getByRole("cell", { name: "1,210 MB/s" })).toBeInTheDocument();
    expect(within(row).getByRole("cell", { name: "raw disk read: 1,494 MB/s" })).toBeInTheDocument();
    expect(within(row).getByRole("cell", { name: "0.81×" })).toBeInTheDocument();
    expect(within(row).getByRole("cell", { name: "2026-11-22" })).toBeInTheDocument();
    expect(within(row).getByText("python bench/gateway_throughput.py")).toBeInTheDocument();
    expect(screen.getByText(/not on this installation/)).toBeInTheDocument();
  });

  it("shows a dash where a figure has no baseline or ratio", () => {
    render(
      <BenchmarksReport
        figures={[{ ...figure, baseline: "", baseline_value: null, ratio: null }]}
        recorded_at={null}
      />,
    );
    expect(screen.getAllByRole("cell", { name: "—" })).toHaveLength(2);
  });

  it("says how to record figures when none exist", () => {
    render(<BenchmarksReport figures={[]} recorded_at={null} />);
    expect(screen.getByRole("heading", { name: "No figures recorded yet" })).toBeInTheDocument();
    expect(screen.queryByRole("table")).not.toBeInTheDocument();
  });
});
