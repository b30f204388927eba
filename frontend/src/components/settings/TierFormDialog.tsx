import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { catalogsQueryOptions } from "@/api/pricing";
import { type Tier, useCheckTier, useCreateTier, useUpdateTier } from "@/api/tiers";
import { Button, Dialog, ErrorBanner, FieldList, type FieldValue } from "@/components/ui";
import {
  classFields,
  DELAY_FIELDS,
  identityFields,
  locationFields,
  posixFields,
  pricingFields,
} from "./tier-fields";
import {
  emptyTierForm,
  type TierFormErrors,
  type TierFormValues,
  tierToForm,
  toCheckBody,
  toCreateBody,
  toUpdateBody,
  validateTierForm,
} from "./tier-form";

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
  const change = (key: keyof TierFormValues, value: FieldValue) => {
    set(key, value as never);
    // a class of another catalog means nothing: the new catalog's class is chosen again
    if (key === "priceCatalog") set("priceClass", "");
  };

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

  const secretHint = tier?.has_secret
    ? "Leave empty to keep the stored secret."
    : "Stored encrypted, never shown again.";
  const location = locationFields(values, secretHint);
  const fields = { values, errors, onChange: change, rowClassName: "form-grid" };
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
        <FieldList {...fields} fields={identityFields(editing)} />
        {values.driver === "posix" ? (
          <FieldList {...fields} fields={posixFields(inUse)} />
        ) : (
          <fieldset className="form-fieldset" disabled={inUse}>
            <legend>{location.legend}</legend>
            <FieldList {...fields} fields={location.fields} />
          </fieldset>
        )}
        <FieldList {...fields} fields={classFields(inUse)} />
        {values.offline ? (
          <fieldset className="form-fieldset">
            <legend>Restore delay per speed (seconds)</legend>
            <FieldList {...fields} fields={DELAY_FIELDS} rowClassName="form-grid form-grid--3" />
          </fieldset>
        ) : null}
        <FieldList {...fields} fields={pricingFields(values, catalogs.data, catalogs.isError)} />

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
