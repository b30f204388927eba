import { fireEvent, render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { BenchmarksReport } from "./BenchmarksReport";

const recorded = `# Benchmarks

## Gateway throughput

Command: \`python bench/gateway_throughput.py\`

| case | MB/s | ratio to disk |
|---|---|---|
| GET 8-way | 1210 | 0.81 |
`;

describe("BenchmarksReport", () => {
  it("renders the recorded tables with their figures", () => {
    render(<BenchmarksReport markdown={recorded} updatedAt="2026-11-22T03:00:00Z" />);
    expect(screen.getByRole("heading", { name: "Gateway throughput", level: 3 })).toBeInTheDocument();
    expect(screen.queryByRole("heading", { level: 1 })).not.toBeInTheDocument();
    // sections start closed and unrendered: the file is long
    expect(screen.queryByRole("table")).not.toBeInTheDocument();
    const details = screen.getByText("Gateway throughput").closest("details") as HTMLDetailsElement;
    details.open = true;
    fireEvent(details, new Event("toggle"));
    const table = screen.getByRole("table");
    expect(within(table).getByRole("columnheader", { name: "ratio to disk" })).toBeInTheDocument();
    expect(within(table).getByRole("cell", { name: "1210" })).toBeInTheDocument();
    expect(screen.getByText("python bench/gateway_throughput.py")).toBeInTheDocument();
    expect(screen.getByRole("heading", { name: "Figures recorded by the developers" })).toBeInTheDocument();
    expect(
      screen.getByText(/not on this installation.*not when the figures were measured\.$/),
    ).toBeInTheDocument();
  });

  it("says how to record figures when none exist", () => {
    render(<BenchmarksReport markdown="" updatedAt={null} />);
    expect(screen.getByRole("heading", { name: "No figures recorded yet" })).toBeInTheDocument();
    expect(screen.queryByRole("table")).not.toBeInTheDocument();
  });
});
