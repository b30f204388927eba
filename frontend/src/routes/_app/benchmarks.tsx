import { useQuery } from "@tanstack/react-query";
import { createFileRoute } from "@tanstack/react-router";
import { benchmarksQueryOptions } from "@/api/benchmarks";
import { BenchmarkRuns } from "@/components/benchmarks/BenchmarkRuns";
import { BenchmarksReport } from "@/components/benchmarks/BenchmarksReport";
import "@/components/benchmarks/benchmarks.css";
import { ErrorBanner, LoadingState, PageHeader } from "@/components/ui";

export const Route = createFileRoute("/_app/benchmarks")({
  component: BenchmarksPage,
});

function BenchmarksPage() {
  const query = useQuery(benchmarksQueryOptions());
  return (
    <>
      <PageHeader
        title="Benchmarks"
        description="The developers' recorded figures (gateway throughput against raw disk, booked against achieved rates, lifecycle and restore speed; medians and ratios from one run each), measured on their machine, not this installation."
      />
      <BenchmarkRuns />
      {query.isPending ? <LoadingState label="Loading figures" /> : null}
      {query.isError ? <ErrorBanner error={query.error} /> : null}
      {query.data ? (
        <BenchmarksReport markdown={query.data.markdown} updatedAt={query.data.updated_at ?? null} />
      ) : null}
    </>
  );
}
