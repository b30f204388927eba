import { useQueryClient } from "@tanstack/react-query";
import { type CatalogSummary, catalogQueryOptions } from "@/api/pricing";
import { Button, FieldList, FieldRows, Select } from "@/components/ui";
import {
  ACCESS_FIELDS,
  DECAY_FIELDS,
  FIXED_COST_FIELDS,
  HYBRID_ON_FIELDS,
  hybridPartFields,
  LIFECYCLE_ON_FIELDS,
  lifecycleFields,
  OBJECT_FIELDS,
  ONE_OFF_FIELDS,
  PERIOD_FIELDS,
  PLAN_END_FIELDS,
  RANGE_FIELDS,
  REQUEST_FIELDS,
  ruleFields,
  VOLUME_FIELDS,
} from "./scenario-fields";
import { catalogLabel, type FormErrors, type FormState } from "./scenario-form";
import { defaultTiers, TierPicker } from "./TierPicker";

/** The what-if inputs; every change updates the report (the page debounces). */
export function ScenarioForm({
  form,
  errors,
  catalogs,
  onChange,
}: {
  form: FormState;
  errors: FormErrors;
  catalogs: CatalogSummary[];
  onChange: (next: FormState) => void;
}) {
  const set = <K extends keyof FormState>(key: K, value: FormState[K]) => onChange({ ...form, [key]: value });
  const setField = (name: string, value: string | boolean) => onChange({ ...form, [name]: value });
  const setLc = (name: string, value: unknown) =>
    onChange({ ...form, lifecycle: { ...form.lifecycle, [name]: value } });
  const tierChoices = [
    ...new Set([...form.tiers, "onprem-example-2026:DISK", "onprem-example-2026:TAPE@standard"]),
  ];
  const tierSelect = tierChoices.map((t) => ({ value: t, label: t }));
  const queryClient = useQueryClient();
  const changeCatalog = (id: string) => {
    if (id === form.catalog) return;
    // tiers named without a catalog belong to the old catalog: start the new one with all its classes
    const kept = form.tiers.filter((t) => t.includes(":"));
    const detail = queryClient.getQueryData(catalogQueryOptions(id).queryKey);
    const fresh = detail ? defaultTiers(detail) : (catalogs.find((c) => c.id === id)?.classes ?? []);
    onChange({ ...form, catalog: id, tiers: [...fresh, ...kept] });
  };
  const fields = { values: form, errors, onChange: setField };
  return (
    <form className="planner-form" onSubmit={(e) => e.preventDefault()} aria-label="What-if scenario">
      <fieldset>
        <legend>Data</legend>
        <Select
          label="Price catalog"
          value={form.catalog}
          onChange={(e) => changeCatalog(e.target.value)}
          options={catalogs.map((c) => ({
            value: c.id,
            label: `${catalogLabel(c)}${c.has_estimates ? " *" : ""}`,
          }))}
          hint="* some figures are estimates"
        />
        <FieldList fields={VOLUME_FIELDS} {...fields} rowClassName="form-row form-row--unit" />
        <FieldList fields={OBJECT_FIELDS} {...fields} />
      </fieldset>

      <TierPicker
        catalogs={catalogs}
        primary={form.catalog}
        selected={form.tiers}
        onChange={(tiers) => set("tiers", tiers)}
        error={errors.tiers}
      />

      <fieldset>
        <legend>Access</legend>
        <FieldList fields={ACCESS_FIELDS} {...fields} />
      </fieldset>

      <fieldset>
        <legend>Chart range (full reads per month)</legend>
        <FieldList fields={RANGE_FIELDS} {...fields} />
      </fieldset>

      <details className="planner-form__more">
        <summary>Requests besides whole-object reads (file checks, listings)</summary>
        <FieldList fields={REQUEST_FIELDS} {...fields} />
      </details>

      <details className="planner-form__more">
        <summary>One-off costs and the plan's end</summary>
        <FieldList
          fields={ONE_OFF_FIELDS}
          values={form.oneOff}
          onChange={(name, value) => set("oneOff", { ...form.oneOff, [name]: value })}
        />
        <FieldList fields={PLAN_END_FIELDS} {...fields} />
      </details>

      <details className="planner-form__more">
        <summary>Period, overwrites, early deletion, fixed costs</summary>
        <FieldList fields={PERIOD_FIELDS} {...fields} />
        <p className="planner-form__label">Fixed monthly costs (USD), added to every tier</p>
        <FieldRows
          keyPrefix="fixed"
          rows={form.fixedCosts}
          fields={() => FIXED_COST_FIELDS}
          errors={(i) => ({ name: errors[`fixed.${i}.name`], monthly: errors[`fixed.${i}.monthly`] })}
          removeLabel={(row) => `Remove ${row.name || "cost"}`}
          onChange={(rows) => set("fixedCosts", rows)}
        />
        <Button size="sm" onClick={() => set("fixedCosts", [...form.fixedCosts, { name: "", monthly: "" }])}>
          Add a fixed cost
        </Button>
      </details>

      <fieldset>
        <legend>Lifecycle policy</legend>
        <FieldList fields={LIFECYCLE_ON_FIELDS} {...fields} />
        {form.lifecycleOn ? (
          <>
            <FieldList
              fields={lifecycleFields(tierSelect)}
              values={form.lifecycle}
              errors={errors}
              errorPrefix="lifecycle."
              onChange={setLc}
            />
            <FieldRows
              keyPrefix="rule"
              rows={form.lifecycle.rules}
              fields={() => ruleFields(tierSelect)}
              errors={(i) => ({ afterDays: errors[`lifecycle.rules.${i}`] })}
              removeLabel={(_, i) => `Remove rule ${i + 1}`}
              onChange={(rules) => setLc("rules", rules)}
            />
            <Button
              size="sm"
              onClick={() =>
                setLc("rules", [
                  ...form.lifecycle.rules,
                  { afterDays: "", to: form.tiers[form.tiers.length - 1] ?? "" },
                ])
              }
            >
              Add a transition
            </Button>
            <FieldList
              fields={DECAY_FIELDS}
              values={form.lifecycle}
              errors={errors}
              errorPrefix="lifecycle."
              onChange={setLc}
            />
          </>
        ) : null}
      </fieldset>

      <fieldset>
        <legend>Hybrid plan</legend>
        <FieldList fields={HYBRID_ON_FIELDS} {...fields} />
        {form.hybridOn ? (
          <>
            <FieldRows
              keyPrefix="part"
              className="form-row form-row--three"
              rows={form.hybrid.parts}
              fields={(i) => hybridPartFields(i, tierSelect)}
              errors={(i) => ({
                dataPercent: errors[`hybrid.${i}.data`],
                readPercent: errors[`hybrid.${i}.read`],
              })}
              onChange={(parts) => set("hybrid", { ...form.hybrid, parts })}
            />
            {errors["hybrid.data"] || errors["hybrid.read"] ? (
              <p className="ui-field__error" role="alert">
                {errors["hybrid.data"] ?? errors["hybrid.read"]}
              </p>
            ) : null}
          </>
        ) : null}
      </fieldset>
    </form>
  );
}
