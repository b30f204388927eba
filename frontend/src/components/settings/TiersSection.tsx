import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  ADOPTING_DRIVERS,
  type Tier,
  tierHealthQueryOptions,
  tiersQueryOptions,
  useDeleteTier,
} from "@/api/tiers";
import { Button, Card, type Column, ConfirmDialog, ErrorBanner, QueryState, Table } from "@/components/ui";
import { AdoptBucketDialog } from "./AdoptBucketDialog";
import { TierFormDialog } from "./TierFormDialog";
import { columns, HealthCell } from "./tier-columns";

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
            <Table
              caption="Storage tiers"
              columns={withActions}
              rows={data}
              rowKey={(t) => t.id}
              rowLabel={(t) => t.name}
            />
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
