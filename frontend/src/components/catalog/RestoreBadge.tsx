import { Badge } from "@/components/ui";

/** An object's readability at a glance: archived, restoring, restored, failed. */
export function RestoreBadge({
  state,
  offline,
  readable,
}: {
  state: string | null | undefined;
  offline: boolean;
  readable?: boolean;
}) {
  if (!offline) return <span className="muted">readable</span>;
  if (state === "ongoing") return <Badge tone="warning">restoring</Badge>;
  if (state === "restored" || readable) return <Badge tone="success">restored</Badge>;
  if (state === "failed") return <Badge tone="danger">restore failed</Badge>;
  return <Badge tone="info">archived</Badge>;
}
