import Markdown from "react-markdown";
import remarkGfm from "remark-gfm";
import { Card, EmptyState } from "@/components/ui";
import "./benchmarks.css";

/** docs/benchmarks.md as recorded by the bench/ scripts: figures, ratios and the commands that made them. */
export function BenchmarksReport({ markdown, updatedAt }: { markdown: string; updatedAt: string | null }) {
  if (!markdown.trim()) {
    return (
      <Card>
        <EmptyState
          title="No figures recorded yet"
          description="Run `make bench` on the machine that serves tierpilot; each script records its figures in docs/benchmarks.md."
        />
      </Card>
    );
  }
  return (
    <Card
      title="Recorded figures"
      description={
        updatedAt ? `Recorded ${new Date(updatedAt).toLocaleString()} (your local time).` : undefined
      }
    >
      <article className="benchmarks-report">
        <Markdown remarkPlugins={[remarkGfm]}>{markdown}</Markdown>
      </article>
    </Card>
  );
}
