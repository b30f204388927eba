import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  ADOPTING_DRIVERS,
  type Tier,
  type TierHealth,
  tierHealthQueryOptions,
  tiersQueryOptions,
  useDeleteTier,
} from "@/api/tiers";
import {
  Badge,
  Button,
  Card,
  type Column,
  ConfirmDialog,
  ErrorBanner,
  QueryState,
  Table,
} from "@/components/ui";
import { formatBytes, formatCount, formatDateTime, formatDuration } from "@/lib/format";
import { AdoptBucketDialog } from "./AdoptBucketDialog";
import { TierFormDialog } from "./TierFormDialog";

function restoreDelays(t: Tier): string {
  const speeds = ["expedited", "standard", "bulk"].filter((s) => t.restore_delays[s] != null);
  return speeds.map((s) => `${s} ${formatDuration(t.restore_delays[s] ?? 0)}`).join(" · ");
}

/** A tier's last probe: answers (with its latency) or not (with the reason). */
function HealthCell({ health, checking }: { health: TierHealth | undefined; checking: boolean }) {
  if (!health) return <span className="cell-sub">{checking ? "checking…" : "not checked"}</span>;
  const checked = `checked ${formatDateTime(health.checked_at)}`;
  return health.ok ? (
    <div className="cell-stack">
      <Badge tone="success" title={checked}>
        answers
      </Badge>
      <span className="cell-sub">{Math.round(health.latency_ms)} ms</span>
    </div>
  ) : (
    <div className="cell-stack">
      <Badge tone="danger" title={checked}>
        no answer
      </Badge>
      <span className="cell-sub" title={health.detail}>
        {health.detail}
      </span>
    </div>
  );
}

/** Overview (admins): how many tiers answer, from the health check the Tiers section shows per tier. */
export function TierHealthCount() {
  const health = useQuery(tierHealthQueryOptions());
  if (!health.data) return null; // checking, or the check failed: Settings › Tiers says why
  const answering = health.data.filter((h) => h.ok).length;
  const failing = health.data.filter((h) => !h.ok).map((h) => h.name);
  return (
    <p className="ui-stat__detail" title={failing.length ? `no answer: ${failing.join(", ")}` : undefined}>
      {answering} of {health.data.length} answer
    </p>
  );
}

const columns: Array<Column<Tier>> = [
  {
    id: "name",
    header: "Tier",
    cell: (t) => (
      <div className="cell-stack">
        <strong>{t.name}</strong>
        {t.location ? (
          <span className="cell-sub mono" title={t.location}>
            {t.location}
          </span>
        ) : null}
      </div>
    ),
  },
  { id: "driver", header: "Driver", cell: (t) => <Badge>{t.driver}</Badge>, hideOnNarrow: true },
  {
    id: "classes",
    header: "Storage classes",
    cell: (t) => <span className="badge-list">{t.storage_classes.join(", ") || "—"}</span>,
    hideOnNarrow: true,
  },
  {
    id: "access",
    header: "Access",
    cell: (t) =>
      t.offline ? (
        <div className="cell-stack">
          <Badge tone="warning">offline archive</Badge>
          {restoreDelays(t) ? <span className="cell-sub">restore: {restoreDelays(t)}</span> : null}
        </div>
      ) : (
        <Badge tone="success">online</Badge>
      ),
  },
  {
    id: "min-days",
    header: "Min. storage",
    cell: (t) => (t.min_storage_days ? `${t.min_storage_days} days` : "—"),
    align: "end",
    hideOnNarrow: true,
  },
  { id: "used", header: "Used", cell: (t) => formatBytes(t.used_bytes), align: "end" },
  {
    id: "capacity",
    header: "Capacity",
    cell: (t) => (t.capacity_bytes ? formatBytes(t.capacity_bytes) : "unlimited"),
    align: "end",
    hideOnNarrow: true,
  },
  {
    id: "objects",
    header: "Objects",
    cell: (t) => `${formatCount(t.object_count)} in ${formatCount(t.bucket_count)} buckets`,
    align: "end",
    hideOnNarrow: true,
  },
];

/** Admins: the storage tiers buckets live on, with where they are and how they are read; add, edit, delete. */
export function TiersSection() {
  const tiers = useQuery(tiersQueryOptions());
  const health = useQuery(tierHealthQueryOptions());
  const healthById = new Map((health.data ?? []).map((h) => [h.tier_id, h]));
  const remove = useDeleteTier();
  const [editing, setEditing] = useState<{ tier: Tier | null } | null>(null);
  const [deleting, setDeleting] = useState<Tier | null>(null);
  const [adopting, setAdopting] = useState<Tier | null>(null);

  const cancelDelete = () => {
    setDeleting(null);
    remove.reset();
  };
  const withActions: Array<Column<Tier>> = [
    ...columns.slice(0, 4),
    {
      id: "health",
      header: "Health",
      cell: (t) => <HealthCell health={healthById.get(t.id)} checking={health.isFetching} />,
    },
    ...columns.slice(4),
    {
      id: "actions",
      header: <span className="visually-hidden">Actions</span>,
      align: "end",
      cell: (t) => {
        const inUse = t.object_count > 0 || t.bucket_count > 0;
        return (
          <div className="table-actions">
            <Button size="sm" onClick={() => setEditing({ tier: t })} aria-label={`Edit ${t.name}`}>
              Edit
            </Button>
            {ADOPTING_DRIVERS.includes(t.driver) ? (
              <Button
                size="sm"
                variant="ghost"
                onClick={() => setAdopting(t)}
                aria-label={`Adopt a bucket on ${t.name}`}
              >
                Adopt bucket
              </Button>
            ) : null}
            <Button
              size="sm"
              variant="ghost"
              className="button-danger-text"
              disabled={inUse}
              title={inUse ? "Holds objects or buckets: move or delete them first" : undefined}
              onClick={() => setDeleting(t)}
              aria-label={`Delete ${t.name}`}
            >
              Delete
            </Button>
          </div>
        );
      },
    },
  ];
  return (
    <Card
      id="tiers"
      title="Tiers"
      description="Storage locations with their access rules. Offline archive tiers need a restore before an object can be read."
      actions={
        <>
          <Button
            onClick={() => health.refetch()}
            loading={health.isFetching}
            title="Probe every tier with its stored settings (answers are reused for a few seconds)"
          >
            Check now
          </Button>
          <Button variant="primary" onClick={() => setEditing({ tier: null })}>
            Add tier
          </Button>
        </>
      }
      padded={false}
    >
      <QueryState query={tiers} loading="Loading tiers…" errorTitle="Could not load tiers" inset>
        {(data) => (
          <>
            {health.isError ? (
              <div className="card-inset">
                <ErrorBanner
                  title="Could not check the tiers' health"
                  error={health.error}
                  onRetry={() => health.refetch()}
                />
              </div>
            ) : null}
            <Table caption="Storage tiers" columns={withActions} rows={data} rowKey={(t) => t.id} />
          </>
        )}
      </QueryState>
      <TierFormDialog open={editing !== null} tier={editing?.tier ?? null} onClose={() => setEditing(null)} />
      <AdoptBucketDialog tier={adopting} onClose={() => setAdopting(null)} />
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete tier ${deleting?.name ?? ""}?`}
        description="Only the tier's settings go; its directory or bucket and anything in it stay as they are."
        confirmLabel="Delete tier"
        pending={remove.isPending}
        error={remove.error}
        onCancel={cancelDelete}
        onConfirm={() => deleting && remove.mutate(deleting.id, { onSuccess: cancelDelete })}
      />
    </Card>
  );
}
