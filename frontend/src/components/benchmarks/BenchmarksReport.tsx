import { useState } from "react";
import Markdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { Card, EmptyState } from "@/components/ui";
import "./benchmarks.css";

// The page owns the only h1: the document's headings move one level down.
const demoted: Components = {
  h1: ({ node: _node, ...props }) => <h2 {...props} />,
  h2: ({ node: _node, ...props }) => <h3 {...props} />,
  h3: ({ node: _node, ...props }) => <h4 {...props} />,
  h4: ({ node: _node, ...props }) => <h5 {...props} />,
};

type Section = { title: string; body: string };

/** The document cut at its "## " headings: what comes before the first one, and each section. */
export function splitSections(markdown: string): { intro: string; sections: Section[] } {
  const parts = markdown.split(/^## +(.+)$/m);
  const sections: Section[] = [];
  for (let i = 1; i < parts.length; i += 2) {
    sections.push({ title: (parts[i] ?? "").trim(), body: parts[i + 1] ?? "" });
  }
  return { intro: parts[0] ?? "", sections };
}

function render(markdown: string) {
  return (
    <Markdown remarkPlugins={[remarkGfm]} components={demoted}>
      {markdown}
    </Markdown>
  );
}

// Closed sections are not rendered at all: the whole file is over a thousand lines of tables.
function RecordedSection({ section }: { section: Section }) {
  const [open, setOpen] = useState(false);
  return (
    <details className="benchmarks-section" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        <h3>{section.title.replace(/`/g, "")}</h3>
      </summary>
      {open && render(section.body)}
    </details>
  );
}

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
  const { intro, sections } = splitSections(markdown);
  return (
    <Card
      title="Figures recorded by the developers"
      description={`Measured by the tierpilot developers with the bench/ scripts on a shared 2-core VM, not on this installation; each section names its run and load.${
        updatedAt
          ? ` This copy of the file dates from ${new Date(updatedAt).toLocaleString()} (your local time): when it was installed or updated, not when the figures were measured.`
          : ""
      }`}
    >
      <article className="benchmarks-report">
        {render(intro)}
        {sections.map((section) => (
          <RecordedSection key={section.title} section={section} />
        ))}
      </article>
    </Card>
  );
}
