import { createFileRoute } from "@tanstack/react-router";
import { NotAvailableYet } from "@/components/layout/NotAvailableYet";

export const Route = createFileRoute("/_app/benchmarks")({
  component: BenchmarksPage,
});

function BenchmarksPage() {
  return (
    <NotAvailableYet
      title="Benchmarks"
      icon="benchmarks"
      summary="Measured gateway throughput, reservation accuracy and lifecycle speed on this installation."
      features={[
        "see the latest throughput figures of the gateway against the machine's own limits",
        "check that booked rates were delivered (achieved against booked per client)",
        "compare runs over time",
      ]}
    />
  );
}
