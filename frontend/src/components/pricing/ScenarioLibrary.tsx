import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  type SavedScenario,
  type ScenarioBody,
  scenariosQueryOptions,
  useCreateScenario,
  useDeleteScenario,
  useDuplicateScenario,
  useShareScenario,
  useUnshareScenario,
  useUpdateScenario,
} from "@/api/pricing";
import {
  Button,
  Card,
  ConfirmDialog,
  CopyField,
  EmptyState,
  ErrorBanner,
  Input,
  QueryState,
} from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import "./pricing.css";

function shareUrl(token: string): string {
  return `${globalThis.location?.origin ?? ""}/planner?shared=${token}`;
}

/** Saved scenarios: save, load, duplicate, share by link, delete, and pick some to compare. */
export function ScenarioLibrary({
  current,
  loadedId,
  onLoad,
  onSaved,
  compare,
  onCompareChange,
}: {
  current: ScenarioBody | null;
  loadedId: number | null;
  onLoad: (scenario: SavedScenario) => void;
  onSaved: (scenario: SavedScenario) => void;
  compare: number[];
  onCompareChange: (ids: number[]) => void;
}) {
  const scenarios = useQuery(scenariosQueryOptions());
  const create = useCreateScenario();
  const update = useUpdateScenario();
  const remove = useDeleteScenario();
  const duplicate = useDuplicateScenario();
  const share = useShareScenario();
  const unshare = useUnshareScenario();
  const [name, setName] = useState("");
  const [deleting, setDeleting] = useState<SavedScenario | null>(null);
  const loaded = scenarios.data?.find((s) => s.id === loadedId) ?? null;
  const error = create.error ?? update.error ?? duplicate.error ?? share.error ?? unshare.error;

  const saveNew = () => {
    if (!current || !name.trim()) return;
    create.mutate(
      { name: name.trim(), body: current },
      {
        onSuccess: (saved) => {
          setName("");
          onSaved(saved);
        },
      },
    );
  };

  return (
    <Card
      title="Saved scenarios"
      description="Save what-ifs by name, share them by link, pick two or more to compare side by side."
      className="print-hide"
    >
      <form
        className="save-row"
        onSubmit={(e) => {
          e.preventDefault();
          saveNew();
        }}
      >
        <Input label="Scenario name" value={name} onChange={(e) => setName(e.target.value)} maxLength={120} />
        <Button
          type="submit"
          variant="primary"
          disabled={!current || !name.trim()}
          loading={create.isPending}
        >
          Save as new
        </Button>
        {loaded ? (
          <Button
            disabled={!current}
            loading={update.isPending}
            onClick={() => current && update.mutate({ id: loaded.id, body: current }, { onSuccess: onSaved })}
          >
            Save changes to “{loaded.name}”
          </Button>
        ) : null}
      </form>
      {error ? <ErrorBanner title="That did not work" error={error} /> : null}
      <QueryState
        query={scenarios}
        loading="Loading scenarios…"
        errorTitle="Could not load scenarios"
        isEmpty={(data) => data.length === 0}
        empty={
          <EmptyState title="No saved scenarios yet" description="Name the current what-if and save it." />
        }
      >
        {(data) => (
          <ul className="scenario-list" aria-label="Saved scenarios">
            {data.map((s) => (
              <li
                key={s.id}
                className={s.id === loadedId ? "scenario-list__item is-current" : "scenario-list__item"}
              >
                <label className="scenario-list__compare">
                  <input
                    type="checkbox"
                    checked={compare.includes(s.id)}
                    onChange={(e) =>
                      onCompareChange(
                        e.target.checked ? [...compare, s.id] : compare.filter((id) => id !== s.id),
                      )
                    }
                    aria-label={`Compare ${s.name}`}
                  />
                </label>
                <div className="scenario-list__name">
                  <strong>{s.name}</strong>
                  <span className="cell-sub">saved {formatDateTime(s.updated_at)}</span>
                  {s.share_token ? <CopyField label="Share link" value={shareUrl(s.share_token)} /> : null}
                </div>
                <div className="table-actions">
                  <Button size="sm" onClick={() => onLoad(s)} aria-label={`Load ${s.name}`}>
                    Load
                  </Button>
                  <Button size="sm" onClick={() => duplicate.mutate(s.id)} aria-label={`Duplicate ${s.name}`}>
                    Duplicate
                  </Button>
                  {s.share_token ? (
                    <Button
                      size="sm"
                      onClick={() => unshare.mutate(s.id)}
                      aria-label={`Stop sharing ${s.name}`}
                    >
                      Stop sharing
                    </Button>
                  ) : (
                    <Button size="sm" onClick={() => share.mutate(s.id)} aria-label={`Share ${s.name}`}>
                      Share
                    </Button>
                  )}
                  <Button
                    size="sm"
                    variant="ghost"
                    className="button-danger-text"
                    onClick={() => setDeleting(s)}
                    aria-label={`Delete ${s.name}`}
                  >
                    Delete
                  </Button>
                </div>
              </li>
            ))}
          </ul>
        )}
      </QueryState>
      <ConfirmDialog
        open={deleting !== null}
        title="Delete this scenario?"
        description={deleting ? `“${deleting.name}” and its share link go away for good.` : ""}
        confirmLabel="Delete scenario"
        pending={remove.isPending}
        error={remove.error}
        onCancel={() => setDeleting(null)}
        onConfirm={() => deleting && remove.mutate(deleting.id, { onSuccess: () => setDeleting(null) })}
      />
    </Card>
  );
}
