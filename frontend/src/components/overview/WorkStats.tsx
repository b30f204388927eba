import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import type { ReactNode } from "react";
import { fixityQueryOptions } from "@/api/integrity";
import { movesQueryOptions } from "@/api/lifecycle";
import { projectsQueryOptions } from "@/api/projects";
import { queueQueryOptions } from "@/api/restores";
import { currentMonth, spendQueryOptions } from "@/api/spend";
import { type QueryLike, QueryState } from "@/components/ui";
import { formatCount, formatMoney, formatPercent } from "@/lib/format";
import { fixitySummary, quotaSummary } from "./workStats";
import "./WorkStats.css";

type Page = "/spend" | "/restores" | "/lifecycle" | "/integrity" | "/projects";

interface Figure {
  value: ReactNode;
  detail?: ReactNode;
  /** Something needs a person: the value is shown in the danger colour. */
  alarm?: boolean;
}

/** One morning figure: its label links to the page where it is acted on; a spinner until its query answers. */
function WorkStat<T>({
  label,
  to,
  query,
  figure,
}: {
  label: string;
  to: Page;
  query: QueryLike<T>;
  figure: (data: T) => Figure | null;
}) {
  const shown = query.data === undefined ? undefined : figure(query.data);
  if (shown === null) return null;
  return (
    <div className="ui-card ui-stat work-stat">
      <p className="ui-stat__label">
        <Link to={to}>{label}</Link>
      </p>
      <QueryState query={query} loading={`Loading ${label.toLowerCase()}`} retry={false}>
        {() =>
          shown ? (
            <>
              <p className={shown.alarm ? "ui-stat__value work-stat__alarm" : "ui-stat__value"}>
                {shown.value}
              </p>
              {shown.detail ? <div className="ui-stat__detail">{shown.detail}</div> : null}
            </>
          ) : null
        }
      </QueryState>
    </div>
  );
}

function SpendStat() {
  const query = useQuery(spendQueryOptions(currentMonth(), "tier"));
  return (
    <WorkStat
      label="Spend this month"
      to="/spend"
      query={query}
      figure={(s) => ({
        value: formatMoney(s.so_far),
        detail: `forecast ${formatMoney(s.forecast)} by month end (day ${Math.floor(s.days_elapsed)} of ${s.days_in_month})`,
      })}
    />
  );
}

function RestoresStat({ everyone }: { everyone: boolean }) {
  const query = useQuery(queueQueryOptions(everyone ? "everyone" : "mine"));
  return (
    <WorkStat
      label="Restores"
      to="/restores"
      query={query}
      figure={({ summary }) => {
        const failed = summary.batches_by_state.failed ?? 0;
        const running = (summary.batches_by_state.in_progress ?? 0) + summary.single_restores_active;
        return {
          value: `${formatCount(running)} in flight`,
          detail: failed ? `${formatCount(failed)} failed batches to look at` : "none failed",
          alarm: failed > 0,
        };
      }}
    />
  );
}

function MovesStat() {
  const query = useQuery(movesQueryOptions(null, "failed"));
  return (
    <WorkStat
      label="Lifecycle moves"
      to="/lifecycle"
      query={query}
      figure={({ counts }) => {
        const failed = counts.failed ?? 0;
        const open = (counts.queued ?? 0) + (counts.running ?? 0) + (counts.switched ?? 0);
        return {
          // A failed move is not tried again by itself: it waits for someone to retry it.
          value: failed ? `${formatCount(failed)} failed` : "none failed",
          detail: `${failed ? "waiting for a retry · " : ""}${formatCount(open)} queued or running`,
          alarm: failed > 0,
        };
      }}
    />
  );
}

function FixityStat() {
  const query = useQuery(fixityQueryOptions());
  return (
    <WorkStat
      label="Fixity"
      to="/integrity"
      query={query}
      figure={(buckets) => {
        const f = fixitySummary(buckets);
        return {
          value: f.failures ? `${formatCount(f.failures)} failing objects` : "no failures",
          detail: f.failures
            ? `in ${formatCount(f.failingBuckets)} of ${formatCount(f.buckets)} buckets`
            : `${formatCount(f.checkedObjects)} objects checked in ${formatCount(f.buckets)} buckets`,
          alarm: f.failures > 0,
        };
      }}
    />
  );
}

function QuotaStat() {
  const query = useQuery(projectsQueryOptions());
  return (
    <WorkStat
      label="Project quotas"
      to="/projects"
      query={query}
      figure={(projects) => {
        const q = quotaSummary(projects);
        if (!q) return null;
        return {
          value: `${formatPercent(q.fullest.share)} used`,
          detail: `fullest: ${q.fullest.name}${q.nearFull ? ` · ${formatCount(q.nearFull)} of ${formatCount(q.withQuota)} at 80 % or more` : ""}`,
          alarm: q.fullest.share >= 0.95,
        };
      }}
    />
  );
}

/** The figures a manager checks each morning: money, quota, work that failed or waits, data at risk. */
export function WorkStats({ isAdmin }: { isAdmin: boolean }) {
  return (
    <section className="grid-stats" aria-label="Money and work">
      <SpendStat />
      <QuotaStat />
      <RestoresStat everyone={isAdmin} />
      <MovesStat />
      <FixityStat />
    </section>
  );
}
