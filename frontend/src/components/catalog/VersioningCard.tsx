import { type BucketSettings, useSetVersioning } from "@/api/catalog";
import { Badge, Button, Card, errorText } from "@/components/ui";

/** Whether writes keep the versions they replace; object lock keeps versioning on. */
export function VersioningCard({ bucket, settings }: { bucket: string; settings: BucketSettings }) {
  const save = useSetVersioning(bucket);
  const state = settings.versioning ?? "Off";
  return (
    <Card
      title="Versioning"
      description="Every write keeps the version it replaces; deletes leave a delete marker."
      actions={
        state === "Enabled" ? (
          <Button
            size="sm"
            loading={save.isPending}
            disabled={settings.object_lock}
            onClick={() => save.mutate("Suspended")}
          >
            Suspend
          </Button>
        ) : (
          <Button size="sm" variant="primary" loading={save.isPending} onClick={() => save.mutate("Enabled")}>
            Enable
          </Button>
        )
      }
    >
      <p>
        Versioning is{" "}
        <Badge tone={state === "Enabled" ? "success" : state === "Suspended" ? "warning" : "neutral"}>
          {state.toLowerCase()}
        </Badge>
        {settings.object_lock ? " — object lock keeps it enabled." : null}
      </p>
      {save.isError ? <p className="ui-field__error">{errorText(save.error)}</p> : null}
    </Card>
  );
}
