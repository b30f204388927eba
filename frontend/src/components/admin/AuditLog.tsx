import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { type AuditFilter, auditCsvHref, auditPageQueryOptions } from "@/api/audit";
import { Button, Card, EmptyState, Input, QueryState, Select, Table } from "@/components/ui";
import { columns } from "./audit-columns";

/** A `datetime-local` value (the browser's time) as ISO 8601 UTC, or undefined when empty or invalid. */
export function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

interface Draft {
  event: string;
  actor: string;
  since: string;
  until: string;
}

const EMPTY: Draft = { event: "", actor: "", since: "", until: "" };

/** Admins: security-relevant events, newest first; filter by event, user and time; page; export as CSV. */
export function AuditLog() {
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [filter, setFilter] = useState<AuditFilter>({});
  // cursors of the pages before the current one: [] on the newest page
  const [cursors, setCursors] = useState<Array<number | null>>([]);
  const [beforeId, setBeforeId] = useState<number | null>(null);
  const page = useQuery(auditPageQueryOptions(filter, beforeId));
  const eventNames = page.data?.event_names ?? [];

  const apply = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setFilter({
      event: draft.event || undefined,
      actor: draft.actor.trim() || undefined,
      since: localToIso(draft.since),
      until: localToIso(draft.until),
    });
    setCursors([]);
    setBeforeId(null);
  };

  const clear = () => {
    setDraft(EMPTY);
    setFilter({});
    setCursors([]);
    setBeforeId(null);
  };

  const older = () => {
    if (!page.data?.next_before_id) return;
    setCursors([...cursors, beforeId]);
    setBeforeId(page.data.next_before_id);
  };

  const newer = () => {
    setBeforeId(cursors[cursors.length - 1] ?? null);
    setCursors(cursors.slice(0, -1));
  };

  return (
    <div className="stack-lg">
      <Card title="Filter" level={2}>
        <form className="stack" onSubmit={apply} aria-label="Filter the audit log">
          <div className="form-grid">
            <Select
              label="Event"
              value={draft.event}
              onChange={(e) => setDraft({ ...draft, event: e.target.value })}
              options={[
                { value: "", label: "All events" },
                { value: "auth.login", label: "auth.login (successes and failures)" },
                ...eventNames.map((name) => ({ value: name, label: name })),
              ]}
            />
            <Input
              label="User"
              hint="Exact username of who acted."
              autoComplete="off"
              autoCapitalize="none"
              spellCheck={false}
              maxLength={64}
              value={draft.actor}
              onChange={(e) => setDraft({ ...draft, actor: e.target.value })}
            />
            <Input
              label="From"
              type="datetime-local"
              value={draft.since}
              onChange={(e) => setDraft({ ...draft, since: e.target.value })}
            />
            <Input
              label="Until"
              type="datetime-local"
              value={draft.until}
              onChange={(e) => setDraft({ ...draft, until: e.target.value })}
            />
          </div>
          <div className="row">
            <Button type="submit" variant="primary">
              Apply filter
            </Button>
            <Button onClick={clear}>Clear</Button>
            <a className="ui-button ui-button--secondary ui-button--md" href={auditCsvHref(filter)} download>
              Export CSV
            </a>
          </div>
        </form>
      </Card>
      <Card
        title="Events"
        description="Newest first. The CSV export holds every event the filter selects, oldest first."
        padded={false}
      >
        <QueryState query={page} loading="Loading events…" errorTitle="Could not load the audit log" inset>
          {(data) => (
            <Table
              caption="Audit events"
              columns={columns}
              rows={data.events}
              rowKey={(e) => e.id}
              empty={
                <div className="card-inset">
                  <EmptyState title="No events" description="Nothing matches this filter." />
                </div>
              }
            />
          )}
        </QueryState>
        <nav className="card-inset row" aria-label="Audit log pages">
          <Button size="sm" onClick={newer} disabled={cursors.length === 0}>
            Newer
          </Button>
          <span className="muted" aria-live="polite">
            Page {cursors.length + 1}
          </span>
          <Button size="sm" onClick={older} disabled={!page.data?.next_before_id || page.isPlaceholderData}>
            Older
          </Button>
        </nav>
      </Card>
    </div>
  );
}
