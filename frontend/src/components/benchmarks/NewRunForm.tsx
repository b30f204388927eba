import { useState } from "react";
import { useCreateBenchmarkRun } from "@/api/benchmarks";
import { Button, Card, ErrorBanner, Input, Select } from "@/components/ui";
import { parseList, parseRatios, parseSizes } from "./runCharts";
import "./benchmarks.css";

const WORKLOADS = [
  { value: "put", label: "PUT" },
  { value: "get", label: "GET" },
  { value: "head", label: "HEAD" },
  { value: "list", label: "LIST" },
  { value: "delete", label: "DELETE" },
  { value: "mixed", label: "Mixed" },
];

/** Starts a sweep through the gateway: workload, sizes, concurrency levels and duration. */
export function NewRunForm() {
  const create = useCreateBenchmarkRun();
  const [workload, setWorkload] = useState("put");
  const [sizes, setSizes] = useState("1024,1048576");
  const [ratios, setRatios] = useState("put=0.2,get=0.7,head=0.1");
  const [concurrency, setConcurrency] = useState("1,4,16,64");
  const [seconds, setSeconds] = useState("5");
  const [reservation, setReservation] = useState("");
  const sizeSpec = parseSizes(sizes);
  const concList = parseList(concurrency);
  const mixed = workload === "mixed";
  const shares = mixed ? parseRatios(ratios) : null;
  const secs = Number(seconds);
  const valid = sizeSpec !== null && concList !== null && secs > 0 && (!mixed || shares !== null);
  return (
    <Card
      title="New run"
      description="A sweep through the gateway with your own S3 key, in a scratch bucket removed after (with a reservation: under a scratch prefix of its bucket)."
    >
      <form
        className="benchmarks-run-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!valid || !sizeSpec || !concList) return;
          create.mutate({
            workload,
            ...sizeSpec,
            concurrency: concList,
            seconds_per_point: secs,
            ...(mixed && shares ? { ratios: shares } : {}),
            ...(reservation.trim() ? { reservation_id: reservation.trim() } : {}),
          });
        }}
      >
        <Select
          label="Workload"
          value={workload}
          onChange={(e) => setWorkload(e.target.value)}
          options={WORKLOADS}
        />
        {mixed ? (
          <Input
            label="Ratios"
            value={ratios}
            onChange={(e) => setRatios(e.target.value)}
            error={shares ? undefined : "name=share pairs of put, get, head, list, delete"}
          />
        ) : null}
        <Input
          label="Object sizes (bytes)"
          value={sizes}
          onChange={(e) => setSizes(e.target.value)}
          error={
            sizeSpec ? undefined : "comma-separated whole numbers, or LOW-HIGH for sizes drawn between them"
          }
        />
        <Input
          label="Concurrency"
          value={concurrency}
          onChange={(e) => setConcurrency(e.target.value)}
          error={concList ? undefined : "whole numbers of at least 1, comma-separated"}
        />
        <Input
          label="Seconds per point"
          type="number"
          min={0.2}
          step={0.1}
          value={seconds}
          onChange={(e) => setSeconds(e.target.value)}
        />
        <Input
          label="Reservation id (optional)"
          value={reservation}
          placeholder="rsv_…"
          onChange={(e) => setReservation(e.target.value)}
        />
        <Button type="submit" variant="primary" loading={create.isPending} disabled={!valid}>
          Start run
        </Button>
      </form>
      {create.isError ? <ErrorBanner error={create.error} /> : null}
    </Card>
  );
}
