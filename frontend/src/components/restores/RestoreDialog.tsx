import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  previewQueryOptions,
  type RestoreBatch,
  type RestoreSpeedOption,
  type Selection,
  type Speed,
  useCreateBatch,
} from "@/api/restores";
import { Button, Dialog, ErrorBanner, Input, QueryState } from "@/components/ui";
import { formatBytes, formatCount, formatCountOf, formatDateTime, formatDuration } from "@/lib/format";
import { formatUsd } from "./restore-format";
import "./restores.css";

const SPEED_NOTES: Record<Speed, string> = {
  expedited: "fastest, priciest per request",
  standard: "the usual choice",
  bulk: "slowest, cheapest",
};

/**
 * Restore a selection (keys and/or folders of one bucket): shows objects, bytes, and per speed the
 * expected ready time and the cost before anything is submitted. The Browser opens it on its selection.
 */
export function RestoreDialog({
  open,
  onClose,
  selection,
  onCreated,
}: {
  open: boolean;
  onClose: () => void;
  selection: Selection;
  onCreated: (batch: RestoreBatch) => void;
}) {
  const [days, setDays] = useState(7);
  const [speed, setSpeed] = useState<Speed>("standard");
  const [name, setName] = useState("");
  const validDays = Number.isInteger(days) && days >= 1 && days <= 30000;
  const preview = useQuery({ ...previewQueryOptions(selection, validDays ? days : 1), enabled: open });
  const create = useCreateBatch();
  const chosen = preview.data?.speeds.find((s) => s.speed === speed);
  const canSubmit = validDays && !!preview.data && preview.data.objects > 0 && !!chosen?.available;

  const submit = () =>
    create.mutate(
      { ...selection, speed, days, name: name.trim() || null },
      {
        onSuccess: (batch) => {
          onCreated(batch);
          onClose();
        },
      },
    );

  return (
    <Dialog
      open={open}
      onClose={onClose}
      size="lg"
      title="Restore archived objects"
      description={`Bucket ${selection.bucket}: ${describeSelection(selection)}.`}
      footer={
        <>
          <Button variant="ghost" onClick={onClose}>
            Cancel
          </Button>
          <Button variant="primary" onClick={submit} disabled={!canSubmit} loading={create.isPending}>
            {preview.data ? `Restore ${formatCountOf(preview.data.objects, "object")}` : "Restore"}
          </Button>
        </>
      }
    >
      <div className="stack">
        {create.error ? <ErrorBanner error={create.error} title="The restore was not submitted" /> : null}
        <QueryState
          query={preview}
          loading="Looking up the selection"
          errorTitle="No preview for this selection"
          retry={false}
        />
        {preview.data ? (
          <>
            <p className="restore-preview__summary" data-testid="restore-preview-summary">
              <strong>{formatCount(preview.data.objects)}</strong> archived{" "}
              {preview.data.objects === 1 ? "object" : "objects"},{" "}
              <strong>{formatBytes(preview.data.bytes)}</strong>
              {preview.data.already_restored
                ? ` (${formatCount(preview.data.already_restored)} readable now: their copies are extended)`
                : ""}
              {preview.data.not_archived
                ? `; ${formatCountOf(preview.data.not_archived, "selected object")} need${preview.data.not_archived === 1 ? "s" : ""} no restore`
                : ""}
              {preview.data.missing_keys.length
                ? `; ${formatCountOf(preview.data.missing_keys.length, "key")} not found`
                : ""}
              .
            </p>
            <fieldset className="restore-speeds">
              <legend>Speed</legend>
              {preview.data.speeds.map((option) => (
                <SpeedCard
                  key={option.speed}
                  option={option}
                  checked={speed === option.speed}
                  onChange={() => setSpeed(option.speed)}
                />
              ))}
            </fieldset>
          </>
        ) : null}
        <div className="restore-form-row">
          <Input
            label="Keep readable for (days)"
            type="number"
            min={1}
            max={30000}
            value={Number.isNaN(days) ? "" : days}
            onChange={(e) => setDays(e.target.valueAsNumber)}
            error={validDays ? undefined : "1 to 30,000 days"}
            hint="The copy expires at the next midnight UTC after this many days."
          />
          <Input
            label="Name (optional)"
            value={name}
            maxLength={200}
            onChange={(e) => setName(e.target.value)}
            placeholder={`${selection.bucket}/…`}
          />
        </div>
      </div>
    </Dialog>
  );
}

function SpeedCard({
  option,
  checked,
  onChange,
}: {
  option: RestoreSpeedOption;
  checked: boolean;
  onChange: () => void;
}) {
  const cost = option.cost_usd;
  return (
    <label className={`restore-speed${checked ? " restore-speed--checked" : ""}`}>
      <input
        type="radio"
        name="restore-speed"
        value={option.speed}
        checked={checked}
        disabled={!option.available}
        onChange={onChange}
      />
      <span className="restore-speed__name">{option.speed}</span>
      <span className="restore-speed__note muted">{SPEED_NOTES[option.speed]}</span>
      <span className="restore-speed__eta">
        ready in ~{formatDuration(option.expected_ready_s)}
        <span className="muted"> ({formatDateTime(option.expected_ready_at)})</span>
      </span>
      <span className="restore-speed__cost" data-testid={`restore-cost-${option.speed}`}>
        {cost ? formatUsd(cost.total) : "cost unknown"}
      </span>
      {cost ? (
        <span className="restore-speed__breakdown muted">
          requests and retrieval {formatUsd(cost.restore)}, restored copy {formatUsd(cost.restored_copy)}
        </span>
      ) : null}
      {option.notes.length ? (
        <span className="restore-speed__notes muted">{option.notes.join("; ")}</span>
      ) : null}
    </label>
  );
}

function describeSelection(s: Selection): string {
  const parts: string[] = [];
  if (s.keys.length)
    parts.push(`${formatCount(s.keys.length)} selected object${s.keys.length === 1 ? "" : "s"}`);
  for (const p of s.prefixes.slice(0, 3)) parts.push(p ? `everything under ${p}` : "the whole bucket");
  if (s.prefixes.length > 3) parts.push(`${s.prefixes.length - 3} more folders`);
  return parts.join(", ") || "nothing selected";
}
