import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { pickerBucketsQueryOptions, pickerFolderQueryOptions, type Selection } from "@/api/restores";
import {
  Button,
  Checkbox,
  Dialog,
  EmptyState,
  ErrorBanner,
  Input,
  QueryState,
  Select,
} from "@/components/ui";
import { formatBytes, formatCount, formatCountOf } from "@/lib/format";
import "./restores.css";

const ARCHIVE_CLASSES = new Set(["GLACIER", "DEEP_ARCHIVE"]);

/** Pick archived objects and folders of one bucket, folder by folder; hands the selection on. */
export function ObjectPicker({
  open,
  onClose,
  onPicked,
}: {
  open: boolean;
  onClose: () => void;
  onPicked: (selection: Selection) => void;
}) {
  const buckets = useQuery({ ...pickerBucketsQueryOptions(), enabled: open });
  const [bucket, setBucket] = useState("");
  const [prefix, setPrefix] = useState("");
  const [keys, setKeys] = useState<Set<string>>(new Set());
  const [prefixes, setPrefixes] = useState<Set<string>>(new Set());
  const chosenBucket = bucket || buckets.data?.[0]?.name || "";
  const folder = useQuery({
    ...pickerFolderQueryOptions(chosenBucket, prefix),
    enabled: open && !!chosenBucket,
  });
  const count = keys.size + prefixes.size;
  const [filter, setFilter] = useState("");
  const needle = filter.trim().toLowerCase();
  const shown = (path: string) => !needle || path.slice(prefix.length).toLowerCase().includes(needle);
  const shownFolders = folder.data?.folders.filter(shown) ?? [];
  const shownObjects = folder.data?.objects.filter((o) => shown(o.key)) ?? [];
  const selectable = shownObjects.filter((o) => ARCHIVE_CLASSES.has(o.storage_class));
  const allTicked =
    shownFolders.length + selectable.length > 0 &&
    shownFolders.every((f) => prefixes.has(f)) &&
    selectable.every((o) => keys.has(o.key));
  // all shown ticked: untick them all; else tick them all
  const flip = (set: Set<string>, items: string[]) =>
    allTicked ? new Set([...set].filter((i) => !items.includes(i))) : new Set([...set, ...items]);
  const tickAll = () => {
    setKeys(
      flip(
        keys,
        selectable.map((o) => o.key),
      ),
    );
    setPrefixes(flip(prefixes, shownFolders));
  };

  const reset = (nextBucket: string) => {
    setBucket(nextBucket);
    setPrefix("");
    setFilter("");
    setKeys(new Set());
    setPrefixes(new Set());
  };
  const toggle = (set: Set<string>, value: string, update: (s: Set<string>) => void) => {
    const next = new Set(set);
    if (next.has(value)) next.delete(value);
    else next.add(value);
    update(next);
  };
  const parent = prefix ? prefix.slice(0, prefix.slice(0, -1).lastIndexOf("/") + 1) : null;

  return (
    <Dialog
      open={open}
      onClose={onClose}
      size="lg"
      title="Choose objects to restore"
      description="Tick archived objects (GLACIER, DEEP_ARCHIVE) or whole folders; the next step shows time and cost."
      footer={
        <>
          <Button variant="ghost" onClick={onClose}>
            Cancel
          </Button>
          <Button
            variant="primary"
            disabled={count === 0}
            onClick={() => onPicked({ bucket: chosenBucket, keys: [...keys], prefixes: [...prefixes] })}
          >
            {count ? `Preview restore of ${formatCount(count)} selected` : "Preview restore"}
          </Button>
        </>
      }
    >
      <div className="stack">
        {buckets.error ? <ErrorBanner error={buckets.error} title="Buckets could not be listed" /> : null}
        {buckets.data && buckets.data.length === 0 ? (
          <EmptyState
            title="Nothing archived"
            description="No bucket of yours holds objects on an archive tier, so there is nothing to restore."
          />
        ) : null}
        {buckets.data?.length ? (
          <Select
            label="Bucket"
            value={chosenBucket}
            onChange={(e) => reset(e.target.value)}
            options={buckets.data.map((b) => ({
              value: b.name,
              label: `${b.name} (${formatCountOf(b.object_count, "object")}, tier ${b.tier})`,
            }))}
          />
        ) : null}
        <div className="row">
          <span className="muted">Folder:</span> <code>/{prefix}</code>
          {parent !== null ? (
            <Button size="sm" variant="ghost" onClick={() => setPrefix(parent)}>
              Up one level
            </Button>
          ) : null}
        </div>
        <QueryState
          query={folder}
          loading={chosenBucket ? "Listing the folder" : false}
          errorTitle="The folder could not be listed"
          retry={false}
        />
        {folder.data ? (
          <div className="row restore-picker__tools">
            <Input
              label="Filter by name"
              type="search"
              value={filter}
              placeholder="part of a name"
              onChange={(e) => setFilter(e.target.value)}
            />
            <Checkbox
              label={needle ? "Select all shown" : "Select all"}
              hint="archived objects and folders listed here"
              checked={allTicked}
              disabled={shownFolders.length + selectable.length === 0}
              onChange={tickAll}
            />
          </div>
        ) : null}
        {folder.data ? (
          <ul className="restore-picker" aria-label={`Contents of /${prefix}`}>
            {shownFolders.map((f) => (
              <li key={f} className="restore-picker__row">
                <Checkbox
                  label={`${f.slice(prefix.length)} (whole folder)`}
                  checked={prefixes.has(f)}
                  onChange={() => toggle(prefixes, f, setPrefixes)}
                />
                <Button
                  size="sm"
                  variant="ghost"
                  onClick={() => setPrefix(f)}
                  aria-label={`Open folder ${f}`}
                >
                  Open
                </Button>
              </li>
            ))}
            {shownObjects.map((o) => {
              const archived = ARCHIVE_CLASSES.has(o.storage_class);
              return (
                <li key={o.key} className="restore-picker__row">
                  <Checkbox
                    label={o.key.slice(prefix.length)}
                    hint={`${formatBytes(o.size)} · ${o.storage_class}${
                      o.restore_state ? ` · ${o.restore_state}` : ""
                    }${archived ? "" : " · readable without a restore"}`}
                    checked={keys.has(o.key)}
                    disabled={!archived}
                    onChange={() => toggle(keys, o.key, setKeys)}
                  />
                </li>
              );
            })}
            {shownFolders.length + shownObjects.length === 0 ? (
              <li className="muted">
                {needle ? "No name here matches the filter." : "This folder is empty."}
              </li>
            ) : null}
          </ul>
        ) : null}
        {folder.data?.truncated ? (
          <p className="muted">
            Only the first 500 entries are listed; tick the folder to restore all of it.
          </p>
        ) : null}
      </div>
    </Dialog>
  );
}
