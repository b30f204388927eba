import { useQuery } from "@tanstack/react-query";
import { benchmarksQueryOptions } from "@/api/benchmarks";
import { PageHeader, QueryState } from "@/components/ui";
import { BenchmarkRuns } from "./BenchmarkRuns";
import { BenchmarksReport } from "./BenchmarksReport";
import "./benchmarks.css";

/** This installation's own benchmark runs first, then the developers' reference figures to compare with. */
export function BenchmarksPage() {
  const query = useQuery(benchmarksQueryOptions());
  return (
    <>
      <PageHeader
        title="Benchmarks"
        description="Measure this installation: sweep the gateway with your own key and chart throughput and latency. Below, the developers' reference figures (gateway throughput against raw disk, booked against achieved rates, lifecycle and restore speed), measured on their machine."
      />
      <BenchmarkRuns />
      <QueryState query={query} loading="Loading figures">
        {(data) => <BenchmarksReport {...data} />}
      </QueryState>
    </>
  );
}
