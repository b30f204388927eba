import type { MappingRow } from "@/api/identity";
import { Badge, type BadgeTone, type Column, Table } from "@/components/ui";

const STATUS: Record<string, { tone: BadgeTone; label: string; title?: string }> = {
  mapped: { tone: "success", label: "mapped" },
  unmapped: { tone: "neutral", label: "no entry", title: "the mapping has no entry for this group" },
  "no-project": {
    tone: "warning",
    label: "no such project",
    title: "the entry names a project that does not exist: it is ignored, nothing is created",
  },
};

const columns: Array<Column<MappingRow>> = [
  { id: "group", header: "Group", cell: (r) => <code>{r.group}</code> },
  { id: "project", header: "Project", cell: (r) => r.project ?? <span className="muted">—</span> },
  { id: "role", header: "Role", cell: (r) => r.role ?? <span className="muted">—</span> },
  {
    id: "status",
    header: "Status",
    cell: (r) => {
      const s = STATUS[r.status] ?? { tone: "neutral" as const, label: r.status };
      return (
        <Badge tone={s.tone} title={s.title}>
          {s.label}
        </Badge>
      );
    },
  },
];

/** Groups with the project and role each gives at sign-in (the mapping, or a dry run's answer). */
export function MappingTable({
  caption,
  rows,
  empty,
}: {
  caption: string;
  rows: readonly MappingRow[];
  empty: React.ReactNode;
}) {
  return <Table caption={caption} columns={columns} rows={rows} rowKey={(r) => r.group} empty={empty} />;
}
