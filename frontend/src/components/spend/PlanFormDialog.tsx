import { type FormEvent, useState } from "react";
import { type SpendPlanUsage, useDeletePlan, useSavePlan } from "@/api/spend";
import { Button, Dialog, ErrorBanner, Input, Select } from "@/components/ui";
import {
  type PlanField,
  type PlanFormErrors,
  type PlanFormValues,
  planToForm,
  serverPlanErrors,
  toPlanBody,
  validatePlanForm,
} from "./plan-form";

const SPEEDS = [
  { value: "expedited", label: "Expedited" },
  { value: "standard", label: "Standard" },
  { value: "bulk", label: "Bulk" },
];

export interface PlanFormDialogProps {
  bucket: string;
  /** The saved plan (null: none, the bucket plans storage only). */
  plan: SpendPlanUsage | null;
  onClose: () => void;
}

/** What a bucket is planned to do each month beyond storing what it holds: the Spend view prices it beside the actual. */
export function PlanFormDialog({ bucket, plan, onClose }: PlanFormDialogProps) {
  const [values, setValues] = useState<PlanFormValues>(() => planToForm(plan));
  const [errors, setErrors] = useState<PlanFormErrors>({});
  const save = useSavePlan(bucket);
  const remove = useDeletePlan(bucket);

  const set = (field: PlanField, value: string) => {
    setValues((v) => ({ ...v, [field]: value }));
    // an edited field's old complaint no longer applies; the next save checks again
    setErrors(({ [field]: _fixed, ...rest }) => rest);
  };
  const number = (field: Exclude<PlanField, "restore_speed">) => ({
    type: "number",
    min: 0,
    inputMode: "decimal" as const,
    value: values[field],
    error: errors[field],
    onChange: (e: { target: { value: string } }) => set(field, e.target.value),
  });

  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    const found = validatePlanForm(values);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    save.mutate(toPlanBody(values), {
      onSuccess: onClose,
      // the server's 422 names the field: show it there
      onError: (error) => setErrors(serverPlanErrors(error)),
    });
  };
  const fieldErrors = Object.keys(serverPlanErrors(save.error)).length > 0;

  return (
    <Dialog
      open
      onClose={onClose}
      title={`Plan for ${bucket}`}
      description="What the bucket is planned to do each month besides storing what it holds. The Spend view prices it with the bucket's tiers' catalogs beside the actual; a bucket without a plan plans storage only."
      footer={
        <>
          {plan ? (
            <Button
              variant="danger"
              loading={remove.isPending}
              onClick={() => remove.mutate(undefined, { onSuccess: onClose })}
            >
              Remove plan
            </Button>
          ) : null}
          <Button onClick={onClose}>Cancel</Button>
          <Button variant="primary" loading={save.isPending} onClick={() => submit()}>
            Save plan
          </Button>
        </>
      }
    >
      <form className="stack" onSubmit={submit} noValidate aria-label={`Plan for ${bucket}`}>
        <div className="form-grid">
          <Input
            label="Reads (GiB / month)"
            hint="Bytes read out of the bucket"
            data-autofocus
            {...number("reads_gib")}
          />
          <Input label="GET-class requests / month" hint="GET, HEAD" {...number("read_requests")} />
          <Input
            label="PUT-class requests / month"
            hint="PUT, COPY, POST, LIST"
            {...number("write_requests")}
          />
          <Input
            label="Restores (GiB / month)"
            hint="From archive tiers; priced per request too, one per object of the bucket's mean size"
            {...number("restores_gib")}
          />
          <Select
            label="Restore speed"
            value={values.restore_speed}
            options={SPEEDS}
            onChange={(e) => set("restore_speed", e.target.value)}
          />
        </div>
        {save.isError && !fieldErrors ? (
          <ErrorBanner title="The plan was not saved" error={save.error} />
        ) : null}
        {remove.isError ? <ErrorBanner title="The plan was not removed" error={remove.error} /> : null}
      </form>
    </Dialog>
  );
}
