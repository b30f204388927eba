import { useState } from "react";
import { type Member, type Project, ROLES, type Role, useChangeRole, useRemoveMember } from "@/api/projects";
import {
  Badge,
  Button,
  Card,
  type Column,
  ConfirmDialog,
  ErrorBanner,
  ProgressBar,
  Table,
} from "@/components/ui";
import { formatBytes, formatCount, formatDateTime } from "@/lib/format";
import { QUOTA_THRESHOLDS } from "./project-form";

function QuotaBar({
  label,
  used,
  quota,
  format,
}: {
  label: string;
  used: number;
  quota: number | null;
  format: (n: number) => string;
}) {
  if (quota == null)
    return (
      <p className="muted">
        {label}: {format(used)} (no quota)
      </p>
    );
  const text = `${format(used)} of ${format(quota)}`;
  return (
    <ProgressBar
      label={label}
      value={used}
      max={quota}
      valueText={text}
      caption={`${label}: ${text} (${quota > 0 ? Math.round((used / quota) * 100) : 100} %)`}
      thresholds={QUOTA_THRESHOLDS}
    />
  );
}

/** One project: its use against quota, its buckets and its members, with the manager's controls. */
export function ProjectCard({
  project,
  manage,
  onAddMember,
  onQuota,
}: {
  project: Project;
  manage: boolean;
  onAddMember: () => void;
  onQuota: () => void;
}) {
  const change = useChangeRole();
  const remove = useRemoveMember();
  const [removing, setRemoving] = useState<Member | null>(null);
  const columns: Array<Column<Member>> = [
    {
      id: "user",
      header: "Member",
      cell: (m) => (
        <>
          {m.username} {m.is_default ? <Badge tone="info">default</Badge> : null}
        </>
      ),
      sortValue: (m) => m.username,
    },
    {
      id: "role",
      header: "Role",
      cell: (m) =>
        manage ? (
          <select
            className="ui-input ui-select"
            aria-label={`Role of ${m.username}`}
            value={m.role}
            disabled={change.isPending}
            onChange={(e) =>
              change.mutate({ project: project.name, username: m.username, role: e.target.value as Role })
            }
          >
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        ) : (
          m.role
        ),
      sortValue: (m) => ROLES.indexOf(m.role as Role),
    },
  ];
  if (manage)
    columns.push({
      id: "actions",
      header: <span className="visually-hidden">Actions</span>,
      label: "Actions",
      align: "end",
      cell: (m) => (
        <Button size="sm" variant="ghost" aria-label={`Remove ${m.username}`} onClick={() => setRemoving(m)}>
          Remove
        </Button>
      ),
    });
  return (
    <Card
      title={project.name}
      description={`${project.personal ? "Personal project" : "Project"} since ${formatDateTime(project.created_at)}`}
      actions={
        manage ? (
          <>
            <Button size="sm" onClick={onQuota}>
              Set quota
            </Button>
            <Button size="sm" onClick={onAddMember}>
              Add member
            </Button>
          </>
        ) : undefined
      }
    >
      <div className="stack">
        <QuotaBar
          label="Stored"
          used={project.used_bytes}
          quota={project.quota_bytes ?? null}
          format={formatBytes}
        />
        <QuotaBar
          label="Objects"
          used={project.used_objects}
          quota={project.quota_objects ?? null}
          format={formatCount}
        />
        <p>
          Buckets:{" "}
          {project.buckets.length ? project.buckets.join(", ") : <span className="muted">none yet</span>}
        </p>
        {change.isError ? <ErrorBanner title="Role not changed" error={change.error} /> : null}
        <Table
          caption={`Members of ${project.name}`}
          columns={columns}
          rows={project.members}
          rowKey={(m) => m.username}
        />
      </div>
      <ConfirmDialog
        open={removing !== null}
        title={`Remove ${removing?.username ?? ""} from ${project.name}?`}
        description="They lose access to the project's buckets; what they stored stays."
        confirmLabel="Remove member"
        pending={remove.isPending}
        error={remove.error}
        onConfirm={() =>
          removing &&
          remove.mutate(
            { project: project.name, username: removing.username },
            { onSuccess: () => setRemoving(null) },
          )
        }
        onCancel={() => {
          remove.reset();
          setRemoving(null);
        }}
      />
    </Card>
  );
}
