import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { capacityQueryOptions, useSetCapacity } from "@/api/reservations";
import { Button, ErrorBanner, Input, QueryState } from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import { formatRate } from "./timeline";
import "./reservations.css";

/** Admins: what the gateway pool delivers per direction and the share never bookable. */
export function CapacityForm() {
  const capacity = useQuery(capacityQueryOptions());
  const save = useSetCapacity();
  const [read, setRead] = useState("");
  const [write, setWrite] = useState("");
  const [share, setShare] = useState("");
  useEffect(() => {
    if (!capacity.data) return;
    setRead(String(capacity.data.read_mbps));
    setWrite(String(capacity.data.write_mbps));
    setShare(String(Math.round(capacity.data.unbookable_share * 1000) / 10));
  }, [capacity.data]);

  const c = capacity.data;
  if (!c) return <QueryState query={capacity} loading="Loading the capacity" />;
  const readValue = Number(read);
  const writeValue = Number(write);
  const shareValue = Number(share);
  const invalid = !(readValue > 0) || !(writeValue > 0) || !(shareValue >= 0 && shareValue < 100);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (invalid) return;
    save.mutate({ read_mbps: readValue, write_mbps: writeValue, unbookable_share: shareValue / 100 });
  };
  const overbooked = (save.data ?? c).overbooked ?? [];
  return (
    <form className="res-capacity" aria-label="Gateway capacity" onSubmit={submit} noValidate>
      <div className="res-form__grid">
        <Input
          label="Read capacity (MB/s)"
          type="number"
          min={0}
          step="any"
          value={read}
          onChange={(e) => setRead(e.target.value)}
          error={readValue > 0 ? null : "above 0"}
          hint={
            c.calibrated_read_mbps != null ? `calibrated: ${formatRate(c.calibrated_read_mbps)}` : undefined
          }
        />
        <Input
          label="Write capacity (MB/s)"
          type="number"
          min={0}
          step="any"
          value={write}
          onChange={(e) => setWrite(e.target.value)}
          error={writeValue > 0 ? null : "above 0"}
          hint={
            c.calibrated_write_mbps != null ? `calibrated: ${formatRate(c.calibrated_write_mbps)}` : undefined
          }
        />
        <Input
          label="Never bookable (%)"
          type="number"
          min={0}
          max={99}
          step="any"
          value={share}
          onChange={(e) => setShare(e.target.value)}
          error={shareValue >= 0 && shareValue < 100 ? null : "0 to below 100"}
          hint="kept for traffic without a reservation"
        />
      </div>
      <p className="muted">
        Bookable now: read {formatRate(c.bookable_read_mbps)}, write {formatRate(c.bookable_write_mbps)}.{" "}
        {c.calibrated_at ? `Last calibrated ${formatDateTime(c.calibrated_at)}. ` : ""}
        Measure the pool with <code>tierpilot gateway calibrate</code>.
      </p>
      {overbooked.length ? (
        <div className="ui-error" role="status">
          {overbooked.map((o) => (
            <p key={o.direction}>
              From {formatDateTime(o.at)} {formatRate(o.booked_mbps)} of {o.direction} are booked but only{" "}
              {formatRate(o.bookable_mbps)} are bookable: those reservations get a proportional share.
            </p>
          ))}
        </div>
      ) : null}
      {save.isError ? <ErrorBanner error={save.error} /> : null}
      <div className="res-form__actions">
        <Button type="submit" variant="primary" disabled={invalid} loading={save.isPending}>
          Save capacity
        </Button>
        {save.isSuccess ? <span role="status">Saved.</span> : null}
      </div>
    </form>
  );
}
