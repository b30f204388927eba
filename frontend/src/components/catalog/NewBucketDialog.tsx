import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useCreateBucket } from "@/api/catalog";
import { tiersQueryOptions } from "@/api/tiers";
import { Button, Dialog, ErrorBanner, Input, Select } from "@/components/ui";

const GIB = 1024 ** 3;

/** Creates a bucket on a tier, with an optional space reservation. */
export function NewBucketDialog({
  open,
  onClose,
  onCreated,
}: {
  open: boolean;
  onClose: () => void;
  onCreated: (name: string) => void;
}) {
  const tiers = useQuery({ ...tiersQueryOptions(), enabled: open });
  const create = useCreateBucket();
  const [name, setName] = useState("");
  const [tier, setTier] = useState("");
  const [spaceGib, setSpaceGib] = useState("");
  const nameError =
    name && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name)
      ? "3–63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit"
      : undefined;
  const space = spaceGib.trim() === "" ? null : Number(spaceGib);
  const spaceError =
    space != null && !(Number.isFinite(space) && space > 0) ? "a positive number of GiB" : undefined;
  const submit = () =>
    create.mutate(
      { name, tier: tier || null, space_bytes: space == null ? null : Math.round(space * GIB) },
      {
        onSuccess: (bucket) => {
          setName("");
          setSpaceGib("");
          onCreated(bucket.name);
        },
      },
    );
  return (
    <Dialog
      open={open}
      onClose={onClose}
      title="New bucket"
      description="A bucket lives on one tier; objects may go to other tiers by storage class."
      footer={
        <>
          <Button onClick={onClose}>Cancel</Button>
          <Button
            variant="primary"
            loading={create.isPending}
            disabled={!name || !!nameError || !!spaceError}
            onClick={submit}
          >
            Create bucket
          </Button>
        </>
      }
    >
      <div className="stack">
        <Input
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value.trim())}
          error={nameError}
          data-autofocus
          autoComplete="off"
        />
        <Select
          label="Tier"
          value={tier}
          onChange={(e) => setTier(e.target.value)}
          options={[
            { value: "", label: "Default tier" },
            ...(tiers.data ?? []).map((t) => ({
              value: t.name,
              label: `${t.name} (${t.storage_classes.join(", ")})`,
            })),
          ]}
        />
        <Input
          label="Space reservation (GiB, optional)"
          hint="Writes beyond it are refused while the reservation is open."
          inputMode="decimal"
          value={spaceGib}
          onChange={(e) => setSpaceGib(e.target.value)}
          error={spaceError}
        />
        {create.isError ? <ErrorBanner title="Could not create the bucket" error={create.error} /> : null}
      </div>
    </Dialog>
  );
}
