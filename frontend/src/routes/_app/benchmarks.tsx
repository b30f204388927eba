import { createFileRoute } from "@tanstack/react-router";
import { BenchmarksPage } from "@/components/benchmarks/BenchmarksPage";

export const Route = createFileRoute("/_app/benchmarks")({
  component: BenchmarksPage,
});
