import { useQuery } from "@tanstack/react-query";
import { healthQueryOptions } from "@/api/health";
import { Badge, Spinner } from "@/components/ui";

function Check({ name, value }: { name: string; value: string }) {
  const ok = value === "ok";
  return (
    <li className="health__check">
      <span>{name}</span>
      <Badge tone={ok ? "success" : "danger"} title={ok ? undefined : value}>
        {ok ? "ok" : "down"}
      </Badge>
    </li>
  );
}

/** Database and broker reachability, refreshed in the background. */
export function HealthSummary() {
  const health = useQuery(healthQueryOptions());
  if (health.isPending) return <Spinner label="Checking health" />;
  if (health.isError) return <Badge tone="danger">API unreachable</Badge>;
  const { status, database, broker, version } = health.data;
  return (
    <div className="health">
      <p className="ui-stat__value">
        <Badge tone={status === "ok" ? "success" : "warning"}>
          {status === "ok" ? "Healthy" : "Degraded"}
        </Badge>
      </p>
      <ul className="health__checks">
        <Check name="Database" value={database} />
        <Check name="Broker" value={broker} />
      </ul>
      {version ? <p className="ui-stat__detail">version {version}</p> : null}
    </div>
  );
}
