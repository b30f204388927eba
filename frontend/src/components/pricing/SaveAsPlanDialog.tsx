import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { bucketsQueryOptions } from "@/api/catalog";
import {
  bucketPlanQueryOptions,
  type PlanUsage,
  planUsageQueryOptions,
  type ScenarioBody,
} from "@/api/pricing";
import { type SpendPlan, type SpendPlanUsage, useSavePlan } from "@/api/spend";
import { Button, Dialog, ErrorBanner, LoadingState, Select } from "@/components/ui";
import { formatCount, formatGib } from "@/lib/format";
import { PlanUsageFields } from "../spend/PlanUsageFields";
import {
  type PlanField,
  type PlanFormErrors,
  type PlanFormValues,
  planToForm,
  serverPlanErrors,
  toPlanBody,
  validatePlanForm,
} from "../spend/plan-form";

/** A plan's usage in one line: "150 GiB read, 1,304 GET, 130 PUT, 100 GiB restored (expedited)". */
export function usageWords(plan: SpendPlanUsage | PlanUsage): string {
  const parts = [
    plan.reads_gib ? `${formatGib(plan.reads_gib)} read` : "",
    plan.read_requests ? `${formatCount(plan.read_requests)} GET` : "",
    plan.write_requests ? `${formatCount(plan.write_requests)} PUT` : "",
    plan.restores_gib ? `${formatGib(plan.restores_gib)} restored (${plan.restore_speed})` : "",
  ].filter(Boolean);
  return parts.length ? `${parts.join(", ")} a month` : "no reads, requests or restores";
}

/** A scenario tier as the user wrote it ("GLACIER@bulk", "tier:archive"). */
function tierLabel(ref: ScenarioBody["tiers"][number]): string {
  return typeof ref === "string" ? ref : ref.label;
}

export interface SaveAsPlanDialogProps {
  /** The scenario being modelled (valid: the Planner offers saving only then). */
  scenario: ScenarioBody;
  /** Admins may save a plan for any bucket: the list then names each bucket's owner. */
  isAdmin?: boolean;
  onClose: () => void;
}

/**
 * Save the modelled scenario's month as one bucket's plan: the figures come from the scenario (the API's
 * plan-usage) and may be adjusted; saving goes through the Spend plans API, which allows the bucket's owner
 * and admins and answers anyone else as for a missing bucket.
 */
export function SaveAsPlanDialog({ scenario, isAdmin = false, onClose }: SaveAsPlanDialogProps) {
  const buckets = useQuery(bucketsQueryOptions());
  const usage = useQuery(planUsageQueryOptions(scenario));
  const [bucket, setBucket] = useState("");
  const [edited, setEdited] = useState<PlanFormValues | null>(null);
  const [errors, setErrors] = useState<PlanFormErrors & { bucket?: string }>({});
  const [saved, setSaved] = useState<SpendPlan | null>(null);
  // a plan is priced at one of the scenario's tiers (the planner's figure for that tier)
  const labels = scenario.tiers.map(tierLabel);
  const [option, setOption] = useState(0);
  const current = useQuery(bucketPlanQueryOptions(bucket));
  const save = useSavePlan(bucket);
  const values = edited ?? (usage.data ? planToForm(usage.data) : null);

  const set = (field: PlanField, value: string) => {
    if (!values) return;
    setEdited({ ...values, [field]: value });
    setErrors(({ [field]: _fixed, ...rest }) => rest);
  };
  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    if (!values) return;
    const found: PlanFormErrors & { bucket?: string } = validatePlanForm(values);
    if (!bucket) found.bucket = "Choose the bucket this plan is for.";
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    // figures kept as the scenario gave them: the scenario itself is the plan, so Spend prices it as the planner
    // does; changed figures are usage only, priced with the bucket's own tiers
    const body = edited
      ? toPlanBody(values)
      : {
          ...toPlanBody(values),
          scenario: {
            ...scenario,
            tiers: [scenario.tiers[option]],
            lifecycle: null,
            hybrid: [],
          } as ScenarioBody,
        };
    save.mutate(body, {
      onSuccess: setSaved,
      // the server's 422 names the field: show it there; a 403 or 404 shows below the form
      onError: (error) => setErrors(serverPlanErrors(error)),
    });
  };
  const fieldErrors = Object.keys(serverPlanErrors(save.error)).length > 0;
  const own = buckets.data ?? [];

  if (saved) {
    return (
      <Dialog
        open
        onClose={onClose}
        title="Plan saved"
        footer={
          <>
            <Link to="/spend" className="ui-button ui-button--secondary ui-button--md">
              Open Spend
            </Link>
            <Button variant="primary" onClick={onClose} data-autofocus>
              Close
            </Button>
          </>
        }
      >
        <p role="status">
          Saved as the plan of <strong>{saved.bucket}</strong>: {usageWords(saved)}, besides storing what it
          holds. The Spend view prices it with the bucket's tiers beside its actual spend (Plan beside
          actual).
        </p>
      </Dialog>
    );
  }

  return (
    <Dialog
      open
      onClose={onClose}
      title="Save as a bucket's plan"
      description="The scenario's month at its read frequency, as what a bucket is planned to do each month besides storing what it holds. The Spend view prices it with that bucket's own tiers beside the actual."
      footer={
        <>
          <Button onClick={onClose}>Cancel</Button>
          <Button
            variant="primary"
            loading={save.isPending}
            disabled={!values || own.length === 0}
            onClick={() => submit()}
          >
            Save plan
          </Button>
        </>
      }
    >
      {buckets.isPending || usage.isPending ? (
        <LoadingState label="Working out the scenario's month…" />
      ) : buckets.isError ? (
        <ErrorBanner
          title="Could not list your buckets"
          error={buckets.error}
          onRetry={() => buckets.refetch()}
        />
      ) : usage.isError ? (
        <ErrorBanner title="The scenario cannot be turned into a plan" error={usage.error} />
      ) : own.length === 0 ? (
        <p>
          A plan belongs to one of your buckets, and you have none yet: create one in the{" "}
          <Link to="/browser">Browser</Link> first.
        </p>
      ) : (
        <form className="stack" onSubmit={submit} noValidate aria-label="Save as a bucket's plan">
          <Select
            label="Bucket"
            hint={isAdmin ? "Every bucket (you are an admin)" : "Your buckets"}
            value={bucket}
            error={errors.bucket}
            data-autofocus
            options={[
              { value: "", label: "Choose a bucket…", disabled: true },
              ...own.map((b) => ({ value: b.name, label: isAdmin ? `${b.name} (${b.owner})` : b.name })),
            ]}
            onChange={(e) => {
              setBucket(e.target.value);
              setErrors(({ bucket: _chosen, ...rest }) => rest);
              save.reset();
            }}
          />
          {bucket && current.isSuccess ? (
            <p className="muted">
              {current.data
                ? `${bucket} has a plan already (${usageWords(current.data)}, saved by ${current.data.updated_by}): saving replaces it.`
                : `${bucket} has no plan yet: it plans storage only.`}
            </p>
          ) : null}
          {labels.length > 1 ? (
            <Select
              label="Priced as"
              hint="The scenario's tier this bucket's plan follows: Spend plans the planner's month for it"
              value={String(option)}
              options={labels.map((label, i) => ({ value: String(i), label }))}
              onChange={(e) => setOption(Number(e.target.value))}
            />
          ) : null}
          <PlanUsageFields
            values={values}
            errors={errors}
            onChange={set}
            restoresHint="Priced on the bucket's archive tiers only"
          />
          {usage.data ? (
            <details>
              <summary>How these follow from the scenario</summary>
              <ul className="plain-list muted">
                {usage.data.basis.map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
            </details>
          ) : null}
          {save.isError && !fieldErrors ? (
            <ErrorBanner title="The plan was not saved" error={save.error} />
          ) : null}
        </form>
      )}
    </Dialog>
  );
}
