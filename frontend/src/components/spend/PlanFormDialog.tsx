import { type FormEvent, useState } from "react";
import { type SpendPlanUsage, useDeletePlan, useSavePlan } from "@/api/spend";
import { Button, Dialog, ErrorBanner } from "@/components/ui";
import { PlanUsageFields } from "./PlanUsageFields";
import {
  type PlanField,
  type PlanFormErrors,
  type PlanFormValues,
  planToForm,
  serverPlanErrors,
  toPlanBody,
  validatePlanForm,
} from "./plan-form";

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
        <PlanUsageFields
          values={values}
          errors={errors}
          onChange={set}
          restoresHint="From archive tiers; priced per request too, one per object of the bucket's mean size"
          autoFocus
        />
        {save.isError && !fieldErrors ? (
          <ErrorBanner title="The plan was not saved" error={save.error} />
        ) : null}
        {remove.isError ? <ErrorBanner title="The plan was not removed" error={remove.error} /> : null}
      </form>
    </Dialog>
  );
}
