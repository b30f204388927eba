import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  bucketsQueryOptions,
  configurationQueryOptions,
  previewQueryOptions,
  useDeleteRule,
} from "@/api/lifecycle";
import { tiersQueryOptions } from "@/api/tiers";
import {
  Button,
  Card,
  ConfirmDialog,
  EmptyState,
  PageHeader,
  QueryState,
  Select,
  Table,
} from "@/components/ui";
import { formatBytes, formatCount, formatDateTime } from "@/lib/format";
import { MoveHistory } from "./MoveHistory";
import { PreviewChart, PreviewSummary } from "./PreviewChart";
import { RuleForm } from "./RuleForm";
import { ruleColumns } from "./rule-columns";
import { emptyDraft, fromRule, nextUtcMidnight, type RuleDraft } from "./rule-form";
import "./lifecycle.css";
import { SweepNow, SweepPeriod } from "./SweepControls";

interface Editing {
  draft: RuleDraft;
  replaceId: string | null;
}

/** Rules per bucket (the same rules S3 clients set), what they will do over 90 days, and executed moves. */
export function LifecyclePage({
  bucket,
  onBucket,
  isAdmin = false,
}: {
  bucket: string;
  onBucket: (b: string) => void;
  isAdmin?: boolean;
}) {
  const buckets = useQuery(bucketsQueryOptions());
  const tiers = useQuery(tiersQueryOptions());
  const config = useQuery(configurationQueryOptions(bucket));
  const preview = useQuery(previewQueryOptions(bucket || null));
  const remove = useDeleteRule(bucket);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);

  const tierNames = tiers.data?.map((t) => t.name) ?? [];
  const classes = [...new Set(tiers.data?.flatMap((t) => t.storage_classes) ?? [])];
  const current = buckets.data?.find((b) => b.bucket === bucket);

  const columns = ruleColumns({
    onEdit: (r) => setEditing({ draft: fromRule(r), replaceId: r.id }),
    onDelete: (r) => setDeleting(r.id),
  });

  return (
    <>
      <PageHeader
        title="Lifecycle"
        description="Rules move objects down the tiers and expire them on schedule. S3 clients see and set the same rules (PutBucketLifecycleConfiguration)."
        actions={isAdmin ? <SweepNow bucket={bucket || null} /> : undefined}
      />
      <SweepPeriod />
      <div className="lc-bucket-bar">
        <Select
          label="Bucket"
          value={bucket}
          onChange={(e) => {
            setEditing(null);
            onBucket(e.target.value);
          }}
          options={[
            { value: "", label: "All buckets (preview and history)" },
            ...(buckets.data ?? []).map((b) => ({
              value: b.bucket,
              label: `${b.bucket} (${b.enabled_rules}/${b.rules} rules on)`,
            })),
          ]}
        />
        {current ? (
          <p className="muted lc-bucket-bar__detail">
            on {current.tier} · {formatCount(current.objects)} objects · {formatBytes(current.bytes)}
            {current.updated_at
              ? ` · rules changed ${formatDateTime(current.updated_at)} by ${current.updated_by}`
              : ""}
          </p>
        ) : null}
      </div>
      <QueryState query={buckets} loading={false} />

      {bucket ? (
        <Card
          title={`Rules of ${bucket}`}
          description="Transitions go to a colder class only; when several rules apply, expiration wins, then the coldest class."
          actions={
            editing ? null : (
              <Button variant="primary" onClick={() => setEditing({ draft: emptyDraft(), replaceId: null })}>
                Add rule
              </Button>
            )
          }
        >
          <QueryState query={config} loading="Loading rules">
            {(data) =>
              editing && data.rules.length === 0 ? null : (
                <Table
                  caption={`Lifecycle rules of ${bucket}`}
                  columns={columns}
                  rows={data.rules}
                  rowKey={(r) => r.id}
                  empty={
                    editing ? null : (
                      <EmptyState
                        title="No rules"
                        description="Objects of this bucket stay where they are written."
                      />
                    )
                  }
                />
              )
            }
          </QueryState>
          {editing ? (
            <RuleForm
              key={editing.replaceId ?? "new"}
              bucket={bucket}
              classes={classes}
              tiers={tierNames}
              initial={editing.draft}
              replaceId={editing.replaceId}
              onDone={() => setEditing(null)}
            />
          ) : null}
        </Card>
      ) : null}

      <Card
        title={bucket ? `Next 90 days in ${bucket}` : "Next 90 days in every bucket"}
        description={`What the saved rules move or expire per day and target tier, and storage per month before and after (prices from each tier's price catalog entry). Days-rules act from midnight UTC: the first moves of a 0-day rule come at ${formatDateTime(new Date(nextUtcMidnight(Date.now())).toISOString(), true)}.`}
      >
        <QueryState query={preview} loading="Computing the preview">
          {(data) => (
            <>
              <PreviewSummary preview={data} />
              <PreviewChart preview={data} tiers={tierNames} />
            </>
          )}
        </QueryState>
      </Card>

      <Card
        title="Move history"
        description="Transitions, expirations and upload clean-ups the workers ran, newest first."
      >
        <MoveHistory bucket={bucket || null} />
      </Card>

      <ConfirmDialog
        open={deleting !== null}
        title={`Delete rule ${deleting ?? ""}?`}
        description="Objects already moved stay where they are; nothing else moves because of this rule."
        confirmLabel="Delete rule"
        pending={remove.isPending}
        error={remove.error}
        onCancel={() => setDeleting(null)}
        onConfirm={() => deleting && remove.mutate(deleting, { onSuccess: () => setDeleting(null) })}
      />
    </>
  );
}
