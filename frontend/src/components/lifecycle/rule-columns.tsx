import type { LifecycleRule } from "@/api/lifecycle";
import { Badge, Button, type Column } from "@/components/ui";
import { describeActions, describeFilter } from "./rule-form";
import "./lifecycle.css";

/** The bucket's rules: id, status, what each applies to and does, and its edit and delete buttons. */
export function ruleColumns({
  onEdit,
  onDelete,
}: {
  onEdit: (rule: LifecycleRule) => void;
  onDelete: (rule: LifecycleRule) => void;
}): Array<Column<LifecycleRule>> {
  return [
    { id: "id", header: "Rule", cell: (r) => <strong>{r.id}</strong> },
    {
      id: "status",
      header: "Status",
      cell: (r) => <Badge tone={r.status === "Enabled" ? "success" : "neutral"}>{r.status}</Badge>,
    },
    { id: "filter", header: "Applies to", cell: describeFilter },
    { id: "actions", header: "Does", cell: describeActions },
    {
      id: "edit",
      header: <span className="visually-hidden">Edit or delete</span>,
      align: "end",
      cell: (r) => (
        <span className="lc-row-actions">
          <Button size="sm" onClick={() => onEdit(r)}>
            Edit
          </Button>
          <Button size="sm" variant="ghost" onClick={() => onDelete(r)} aria-label={`Delete rule ${r.id}`}>
            Delete
          </Button>
        </span>
      ),
    },
  ];
}
