import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Report } from "@/api/pricing";
import { BreakEvenSummary } from "./BreakEvenSummary";

const zero = {
  storage: 0,
  requests: 0,
  retrieval: 0,
  restore: 0,
  restored_copy: 0,
  egress: 0,
  early_deletion: 0,
  monitoring: 0,
  fixed: 0,
  total: 0,
};
const option = (tier: string, storage: number, egress = 0) => ({
  tier,
  monthly: { ...zero, storage, egress, total: storage + egress },
  total: zero,
  restore_hours: null,
});

// seven options, every pair crossing somewhere: 21 break-even points, of which six join neighbours
const names = ["archive", "aws", "azure", "gcp", "oracle", "disk", "tape"];
const tiers = names.map((n, i) => option(n, 1124.19 + i * 10.5, i === 1 ? 912.6 : 0));
const breakEven = names.flatMap((a, i) =>
  names
    .slice(i + 1)
    .map((b, j) => ({ cheaper_below: b, cheaper_above: a, reads_per_month: 0.001 * (i + j + 1) })),
);
const report = {
  reads_per_month: 0.164,
  tiers,
  break_even: breakEven,
  dominance: [],
  cheapest: names.map((n, i) => ({ from: i, to: i + 1, tier: n })),
} as unknown as Report;

describe("BreakEvenSummary", () => {
  it("answers with a ranking and lists only the break-evens between neighbours", () => {
    expect(report.break_even).toHaveLength(21);
    render(<BreakEvenSummary report={report} />);
    expect(screen.getByTestId("ranked-answer")).toHaveTextContent(
      "Cheapest at your access: archive ($1,124.19/month), then azure (+$21.00), gcp (+$31.50), oracle (+$42.00)…",
    );
    const ranked = within(screen.getByRole("list", { name: "Options by monthly cost" })).getAllByRole(
      "listitem",
    );
    expect(ranked).toHaveLength(7);
    expect(ranked[6]).toHaveTextContent("aws: $2,047.29/month (+$923.10) · mostly storage");
    const points = within(screen.getByRole("list", { name: "Break-even points" })).getAllByRole("listitem");
    expect(points).toHaveLength(6);
    expect(points[0]).toHaveTextContent("azure is cheaper than archive below 0.002 full reads a month");
  });
});
