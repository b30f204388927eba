import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { catalogsQueryOptions } from "@/api/pricing";
import { type Tier, useCheckTier, useCreateTier, useUpdateTier } from "@/api/tiers";
import { Button, Checkbox, Dialog, ErrorBanner, Field, Input, Select } from "@/components/ui";
import {
  AZURE_ACCESS_TIERS,
  type Driver,
  EGRESS_DESTINATIONS,
  type EgressDestination,
  emptyTierForm,
  GCS_CLASSES,
  hasEgress,
  type TierFormErrors,
  type TierFormValues,
  tierToForm,
  toCheckBody,
  toCreateBody,
  toUpdateBody,
  validateTierForm,
} from "./tier-form";

const EGRESS_LABELS: Record<EgressDestination, string> = {
  internet: "the internet",
  "research-network": "a research network",
  "same-region": "the same region",
};

/** Add a tier, or edit one (`tier` given); every opening starts from the tier's current values. */
export function TierFormDialog({
  open,
  tier,
  onClose,
}: {
  open: boolean;
  tier: Tier | null;
  onClose: () => void;
}) {
  if (!open) return null;
  return <TierForm key={tier?.id ?? "new"} tier={tier} onClose={onClose} />;
}

function TierForm({ tier, onClose }: { tier: Tier | null; onClose: () => void }) {
  const editing = tier !== null;
  const [values, setValues] = useState<TierFormValues>(() => (tier ? tierToForm(tier) : emptyTierForm()));
  const [errors, setErrors] = useState<TierFormErrors>({});
  const create = useCreateTier();
  const update = useUpdateTier();
  const save = editing ? update : create;
  const catalogs = useQuery(catalogsQueryOptions());
  const check = useCheckTier();
  const inUse = !!tier && (tier.object_count > 0 || tier.bucket_count > 0);

  const set = <K extends keyof TierFormValues>(key: K, value: TierFormValues[K]) => {
    setValues((v) => ({ ...v, [key]: value }));
    // an edited field's old complaint no longer applies; the next submit checks again
    setErrors(({ [key]: _fixed, ...rest }) => rest);
    check.reset();
  };
  const text = (key: keyof TierFormValues) => ({
    value: String(values[key]),
    error: errors[key],
    onChange: (e: { target: { value: string } }) => set(key, e.target.value as never),
  });

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const found = validateTierForm(values, { hasStoredSecret: tier?.has_secret });
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    const done = { onSuccess: onClose };
    if (tier) update.mutate({ id: tier.id, body: toUpdateBody(values) }, done);
    else create.mutate(toCreateBody(values), done);
  };

  const testConnection = () => {
    const found = validateTierForm(values, { hasStoredSecret: tier?.has_secret });
    setErrors(found);
    if (Object.keys(found).length === 0) check.mutate(toCheckBody(values, tier?.id));
  };

  const catalog = catalogs.data?.find((c) => c.id === values.priceCatalog);
  const secretHint = tier?.has_secret
    ? "Leave empty to keep the stored secret."
    : "Stored encrypted, never shown again.";
  return (
    <Dialog
      open
      size="lg"
      onClose={onClose}
      title={editing ? `Edit tier ${tier.name}` : "Add tier"}
      description={
        inUse
          ? "This tier holds data: its location and whether it is offline cannot change."
          : "A storage location with its access rules. Buckets are created on a tier; lifecycle rules move objects between tiers."
      }
    >
      <form className="stack" onSubmit={submit} noValidate aria-label={editing ? "Edit tier" : "Add tier"}>
        {save.isError ? <ErrorBanner title="The tier was not saved" error={save.error} /> : null}
        <div className="form-grid">
          <Input label="Name" autoComplete="off" spellCheck={false} {...text("name")} />
          <Select
            label="Driver"
            value={values.driver}
            disabled={editing}
            hint={editing ? "The driver of a tier cannot change." : undefined}
            onChange={(e) => set("driver", e.target.value as Driver)}
            options={[
              { value: "posix", label: "posix — a directory on this machine" },
              { value: "s3", label: "s3 — an S3-compatible endpoint (AWS, Oracle, MinIO…)" },
              { value: "azure", label: "azure — an Azure Blob container" },
              { value: "gcs", label: "gcs — a Google Cloud Storage bucket" },
            ]}
          />
        </div>

        {values.driver === "posix" ? (
          <Input
            label="Directory"
            hint="Absolute, or relative to the data directory's tiers/ folder."
            spellCheck={false}
            disabled={inUse}
            {...text("path")}
          />
        ) : values.driver === "azure" ? (
          <fieldset className="form-fieldset" disabled={inUse}>
            <legend>Azure Blob container</legend>
            <div className="form-grid">
              <Select
                label="Credentials"
                value={values.azureAuth}
                onChange={(e) => set("azureAuth", e.target.value as TierFormValues["azureAuth"])}
                options={[
                  { value: "key", label: "Account URL and shared key" },
                  { value: "sas", label: "Account URL and SAS token" },
                  { value: "connection", label: "Connection string" },
                ]}
              />
              <Input
                label="Account URL"
                placeholder="https://myaccount.blob.core.windows.net"
                hint={
                  values.azureAuth === "connection" ? "Optional: the connection string names it." : undefined
                }
                spellCheck={false}
                {...text("accountUrl")}
              />
              <Input label="Container" spellCheck={false} {...text("container")} />
              <Input label="Name prefix" hint="Optional folder inside the container." {...text("prefix")} />
              {values.azureAuth === "key" ? (
                <>
                  <Input
                    label="Account name"
                    hint="Optional when the URL names the account."
                    spellCheck={false}
                    {...text("accountName")}
                  />
                  <Input
                    label="Account key"
                    type="password"
                    autoComplete="new-password"
                    hint={secretHint}
                    {...text("accountKey")}
                  />
                </>
              ) : values.azureAuth === "sas" ? (
                <Input
                  label="SAS token"
                  type="password"
                  autoComplete="new-password"
                  hint={secretHint}
                  {...text("sasToken")}
                />
              ) : (
                <Input
                  label="Connection string"
                  type="password"
                  autoComplete="new-password"
                  hint={secretHint}
                  {...text("connectionString")}
                />
              )}
              <Select
                label="Access tier of new blobs"
                value={values.accessTier}
                hint="ARCHIVE makes the tier an offline archive (restores rehydrate)."
                onChange={(e) => set("accessTier", e.target.value)}
                options={AZURE_ACCESS_TIERS.map((t) => ({ value: t, label: t }))}
              />
              <Select
                label="Rehydration"
                value={values.rehydrate}
                onChange={(e) => set("rehydrate", e.target.value === "in_place" ? "in_place" : "copy")}
                options={[
                  { value: "copy", label: "Into a copy that expires (like S3 restores)" },
                  { value: "in_place", label: "In place: the blob stays online" },
                ]}
              />
              <Select
                label="Rehydrate to"
                value={values.rehydrateTier}
                onChange={(e) => set("rehydrateTier", e.target.value)}
                options={["HOT", "COOL", "COLD"].map((t) => ({ value: t, label: t }))}
              />
            </div>
          </fieldset>
        ) : values.driver === "gcs" ? (
          <fieldset className="form-fieldset" disabled={inUse}>
            <legend>Google Cloud Storage bucket</legend>
            <div className="form-grid">
              <Input label="Bucket" spellCheck={false} {...text("bucket")} />
              <Input label="Name prefix" hint="Optional folder inside the bucket." {...text("prefix")} />
              <Input
                label="Project"
                hint="Optional: the key names it."
                spellCheck={false}
                {...text("project")}
              />
              <Input
                label="Endpoint URL"
                placeholder="https://storage.googleapis.com"
                hint="Empty for Google Cloud; an emulator's URL goes without a key."
                spellCheck={false}
                {...text("endpointUrl")}
              />
              <Select
                label="Class of new objects"
                value={values.gcsStorageClass}
                hint="All classes are online; colder ones have minimum durations and retrieval fees."
                onChange={(e) => set("gcsStorageClass", e.target.value)}
                options={GCS_CLASSES.map((c) => ({ value: c, label: c }))}
              />
            </div>
            <Field label="Service-account key (JSON)" hint={secretHint} error={errors.serviceAccountKey}>
              {(control) => (
                <textarea
                  {...control}
                  className="ui-input"
                  rows={4}
                  spellCheck={false}
                  autoComplete="off"
                  value={values.serviceAccountKey}
                  onChange={(e) => set("serviceAccountKey", e.target.value)}
                />
              )}
            </Field>
          </fieldset>
        ) : (
          <fieldset className="form-fieldset" disabled={inUse}>
            <legend>S3 endpoint</legend>
            <div className="form-grid">
              <Input
                label="Endpoint URL"
                placeholder="https://s3.us-east-1.amazonaws.com"
                {...text("endpointUrl")}
              />
              <Input label="Region" {...text("region")} />
              <Input label="Bucket" spellCheck={false} {...text("bucket")} />
              <Input label="Key prefix" hint="Optional folder inside the bucket." {...text("prefix")} />
              <Input label="Access key ID" autoComplete="off" spellCheck={false} {...text("accessKeyId")} />
              <Input
                label="Secret access key"
                type="password"
                autoComplete="new-password"
                hint={secretHint}
                {...text("secretAccessKey")}
              />
              <Input
                label="Storage class of new objects"
                hint="GLACIER or DEEP_ARCHIVE make the tier an offline archive."
                {...text("s3StorageClass")}
              />
            </div>
          </fieldset>
        )}

        <Input
          label="Storage classes served"
          hint="The x-amz-storage-class values that land on this tier, separated by commas."
          spellCheck={false}
          {...text("storageClasses")}
        />
        <Checkbox
          label="Offline archive"
          hint="Objects must be restored before they can be read."
          checked={values.offline}
          disabled={inUse}
          onChange={(e) => set("offline", e.target.checked)}
        />
        {values.offline ? (
          <fieldset className="form-fieldset">
            <legend>Restore delay per speed (seconds)</legend>
            <div className="form-grid form-grid--3">
              <Input label="Expedited" inputMode="decimal" {...text("expedited")} />
              <Input label="Standard" inputMode="decimal" {...text("standard")} />
              <Input label="Bulk" inputMode="decimal" {...text("bulk")} />
            </div>
          </fieldset>
        ) : null}

        <div className="form-grid">
          <Input
            label="Capacity (GiB)"
            hint="GiB = 2³⁰ bytes. Empty: no limit."
            inputMode="decimal"
            {...text("capacityGiB")}
          />
          <Input
            label="Minimum storage (days)"
            hint="Objects leaving earlier are charged the remaining days."
            inputMode="numeric"
            {...text("minStorageDays")}
          />
          <Select
            label="Price catalog"
            value={values.priceCatalog}
            hint={catalogs.isError ? "Price catalogs could not be loaded." : undefined}
            onChange={(e) => {
              set("priceCatalog", e.target.value);
              set("priceClass", "");
            }}
            options={[
              { value: "", label: "None" },
              ...(catalogs.data ?? []).map((c) => ({
                value: c.id,
                label: `${c.id} (${c.provider}, ${c.region})`,
              })),
            ]}
          />
          <Select
            label="Priced as class"
            value={values.priceClass}
            error={errors.priceClass}
            disabled={!catalog}
            onChange={(e) => set("priceClass", e.target.value)}
            options={[
              { value: "", label: catalog ? "Choose a class" : "Choose a catalog first" },
              ...(catalog?.classes ?? []).map((c) => ({ value: c, label: c })),
            ]}
          />
          {hasEgress(values.driver) ? (
            <Select
              label="Reads leave the provider by"
              value={values.priceEgress}
              hint="Egress is billed where bytes leave the tier's provider: the internet, a research-network peering (e.g. SINET), or the same region as this gateway (free)."
              disabled={!catalog}
              onChange={(e) =>
                set("priceEgress", EGRESS_DESTINATIONS.find((d) => d === e.target.value) ?? "internet")
              }
              options={EGRESS_DESTINATIONS.map((d) => ({ value: d, label: EGRESS_LABELS[d] }))}
            />
          ) : null}
        </div>

        {check.data ? (
          <p role="status" className={check.data.ok ? "muted" : "ui-field__error"}>
            {check.data.ok ? "Connection works: " : "Connection failed: "}
            {check.data.message}
          </p>
        ) : null}
        {check.isError ? <ErrorBanner title="The connection test was refused" error={check.error} /> : null}
        <div className="ui-dialog__footer">
          {values.driver !== "posix" ? (
            <Button onClick={testConnection} loading={check.isPending}>
              Test connection
            </Button>
          ) : null}
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" loading={save.isPending}>
            {editing ? "Save tier" : "Add tier"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
