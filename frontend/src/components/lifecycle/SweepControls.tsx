import { useQuery } from "@tanstack/react-query";
import { sweepScheduleQueryOptions, useSweepNow } from "@/api/lifecycle";
import { Button, errorText } from "@/components/ui";
import { formatDateTime, formatDuration } from "@/lib/format";
import { sweepTimes } from "./sweep-times";

/** When the workers next act on their own, and (admins) a sweep at once. */
export function SweepPeriod() {
  const schedule = useQuery(sweepScheduleQueryOptions());
  if (!schedule.data) return null;
  const period = formatDuration(schedule.data.period_s);
  const times = sweepTimes(schedule.data, new Date());
  return (
    <p className="muted lc-sweep-period" data-testid="sweep-times">
      The workers sweep every {period}: objects that fall due are queued for moving within {period}.{" "}
      {times.kind === "unknown" ? (
        <>No scheduled sweep has run yet; the first starts within {period} of the workers starting.</>
      ) : (
        <>
          Last sweep started <time dateTime={times.last}>{formatDateTime(times.last, true)}</time>;{" "}
          {times.kind === "upcoming" ? "next sweep at " : "the next was due at "}
          <time dateTime={times.next}>{formatDateTime(times.next, true)}</time>
          {times.kind === "late" ? " and has not started: check that beat and the worker run." : "."}
        </>
      )}
    </p>
  );
}

/** Runs the lifecycle sweep of a bucket (or of all) now, instead of at its next period. */
export function SweepNow({ bucket }: { bucket: string | null }) {
  const sweep = useSweepNow(bucket);
  return (
    <div className="row">
      {sweep.isSuccess ? (
        <output className="muted">Sweep queued at {formatDateTime(new Date().toISOString(), true)}.</output>
      ) : null}
      {sweep.isError ? <span className="ui-field__error">{errorText(sweep.error)}</span> : null}
      <Button onClick={() => sweep.mutate()} loading={sweep.isPending}>
        {bucket ? `Sweep ${bucket} now` : "Sweep all buckets now"}
      </Button>
    </div>
  );
}
