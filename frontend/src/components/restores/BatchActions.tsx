import { useState } from "react";
import {
  exportUrls,
  type RestoreBatch,
  SPEEDS,
  type Speed,
  useRetryBatch,
  useUpgradeSpeed,
} from "@/api/restores";
import { Button, ErrorBanner, Select } from "@/components/ui";
import { formatCount } from "@/lib/format";
import { fasterSpeeds } from "./restore-format";
import "./restores.css";

/** A batch's actions: a faster speed while it runs, a retry of what failed, its lists for download. */
export function BatchActions({ batch }: { batch: RestoreBatch }) {
  const retry = useRetryBatch();
  const upgrade = useUpgradeSpeed();
  const faster = fasterSpeeds<Speed>(batch.speed, SPEEDS);
  const [speed, setSpeed] = useState<Speed | "">("");
  const urls = exportUrls(batch.id);
  const readable = batch.progress.ready > 0;
  return (
    <div className="stack">
      {retry.error ? <ErrorBanner error={retry.error} title="Retry failed" /> : null}
      {upgrade.error ? <ErrorBanner error={upgrade.error} title="The speed was not changed" /> : null}
      <div className="row restore-actions">
        {batch.state === "in_progress" && faster.length ? (
          <>
            <Select
              label="Speed up to"
              value={speed}
              onChange={(e) => setSpeed(e.target.value as Speed | "")}
              options={[
                { value: "", label: "choose a faster speed" },
                ...faster.map((s) => ({ value: s, label: s })),
              ]}
            />
            <Button
              disabled={!speed}
              loading={upgrade.isPending}
              onClick={() =>
                speed && upgrade.mutate({ id: batch.id, speed }, { onSuccess: () => setSpeed("") })
              }
            >
              Speed up
            </Button>
          </>
        ) : null}
        {batch.progress.failed ? (
          <Button variant="primary" loading={retry.isPending} onClick={() => retry.mutate(batch.id)}>
            Retry {formatCount(batch.progress.failed)} failed
          </Button>
        ) : null}
      </div>
      <nav className="row restore-exports" aria-label="Download list">
        <span className="muted">Download list:</span>
        {readable ? (
          <>
            <a className="ui-button ui-button--secondary ui-button--sm" href={urls.csv}>
              CSV of keys
            </a>
            <a className="ui-button ui-button--secondary ui-button--sm" href={urls.tierpilot}>
              tierpilot cp script
            </a>
            <a className="ui-button ui-button--secondary ui-button--sm" href={urls.aws}>
              aws s3 cp script
            </a>
          </>
        ) : (
          <span className="muted">available once objects are ready</span>
        )}
      </nav>
    </div>
  );
}
