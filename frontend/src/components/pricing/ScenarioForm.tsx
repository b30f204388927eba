import { useQueryClient } from "@tanstack/react-query";
import { type CatalogSummary, catalogQueryOptions } from "@/api/pricing";
import { Button, Checkbox, Input, Select } from "@/components/ui";
import {
  catalogLabel,
  type Destination,
  type FormErrors,
  type FormState,
  type RequestsPer,
} from "./scenario-form";
import { defaultTiers, TierPicker } from "./TierPicker";

const EGRESS_OPTIONS = [
  { value: "same-region", label: "Same region (free)" },
  { value: "internet", label: "Internet" },
  { value: "research-network", label: "Research network link" },
  { value: "inter-region", label: "Another region (same provider)" },
  { value: "other-cloud", label: "Another cloud (internet rates)" },
];

const PER_OPTIONS = [
  { value: "hour", label: "per hour" },
  { value: "day", label: "per day" },
  { value: "month", label: "per month" },
];

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
  const setLc = <K extends keyof FormState["lifecycle"]>(key: K, value: FormState["lifecycle"][K]) =>
    onChange({ ...form, lifecycle: { ...form.lifecycle, [key]: value } });
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
        <div className="form-row">
          <Input
            label="Stored volume (GiB)"
            inputMode="decimal"
            value={form.volumeGib}
            onChange={(e) => set("volumeGib", e.target.value)}
            error={errors.volumeGib}
          />
          <Input
            label="Objects"
            inputMode="numeric"
            value={form.objects}
            onChange={(e) => set("objects", e.target.value)}
            error={errors.objects}
          />
        </div>
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
        <div className="form-row">
          <Input
            label="Full reads per month"
            inputMode="decimal"
            value={form.readsPerMonth}
            onChange={(e) => set("readsPerMonth", e.target.value)}
            error={errors.readsPerMonth}
            hint="of the whole data set"
          />
          <Input
            label="Share read each time (%)"
            inputMode="decimal"
            value={form.readPercent}
            onChange={(e) => set("readPercent", e.target.value)}
            error={errors.readPercent}
          />
        </div>
        <div className="form-row">
          <Select
            label="Downloads go to"
            value={form.egress}
            onChange={(e) => set("egress", e.target.value as Destination)}
            options={EGRESS_OPTIONS}
          />
          <Input
            label="Share downloaded (%)"
            inputMode="decimal"
            value={form.egressPercent}
            onChange={(e) => set("egressPercent", e.target.value)}
            error={errors.egressPercent}
          />
        </div>
        <Input
          label="Read amplification (×)"
          inputMode="decimal"
          value={form.readAmplification}
          onChange={(e) => set("readAmplification", e.target.value)}
          error={errors.readAmplification}
          hint="bytes a client transfers per byte it needs (read-ahead of a FUSE client: above 1)"
        />
        <Input
          label="Restored copy kept (days)"
          inputMode="decimal"
          value={form.restoredCopyDays}
          onChange={(e) => set("restoredCopyDays", e.target.value)}
          error={errors.restoredCopyDays}
        />
      </fieldset>

      <fieldset>
        <legend>Chart range (full reads per month)</legend>
        <div className="form-row">
          <Input
            label="Frequency from"
            inputMode="decimal"
            value={form.freqMin}
            onChange={(e) => set("freqMin", e.target.value)}
            error={errors.freqMin}
          />
          <Input
            label="Frequency to"
            inputMode="decimal"
            value={form.freqMax}
            onChange={(e) => set("freqMax", e.target.value)}
            error={errors.freqMax}
          />
        </div>
      </fieldset>

      <details className="planner-form__more">
        <summary>Requests besides whole-object reads (file checks, listings)</summary>
        <Select
          label="Counted"
          value={form.requestsPer}
          onChange={(e) => set("requestsPer", e.target.value as RequestsPer)}
          options={PER_OPTIONS}
        />
        <div className="form-row">
          <Input
            label="GET"
            inputMode="numeric"
            value={form.requestsGet}
            onChange={(e) => set("requestsGet", e.target.value)}
            error={errors.requestsGet}
          />
          <Input
            label="HEAD"
            inputMode="numeric"
            value={form.requestsHead}
            onChange={(e) => set("requestsHead", e.target.value)}
            error={errors.requestsHead}
          />
        </div>
        <div className="form-row">
          <Input
            label="PUT"
            inputMode="numeric"
            value={form.requestsPut}
            onChange={(e) => set("requestsPut", e.target.value)}
            error={errors.requestsPut}
          />
          <Input
            label="LIST"
            inputMode="numeric"
            value={form.requestsList}
            onChange={(e) => set("requestsList", e.target.value)}
            error={errors.requestsList}
          />
        </div>
      </details>

      <details className="planner-form__more">
        <summary>One-off costs and the plan's end</summary>
        <Checkbox
          label="Initial upload (one PUT per object)"
          checked={form.oneOff.initialUpload}
          onChange={(e) => set("oneOff", { ...form.oneOff, initialUpload: e.target.checked })}
        />
        <Checkbox
          label="Lifecycle transition into the class (fee per object)"
          checked={form.oneOff.transitionIn}
          onChange={(e) => set("oneOff", { ...form.oneOff, transitionIn: e.target.checked })}
        />
        <Checkbox
          label="Deleted when the plan ends (early deletion fees)"
          checked={form.oneOff.deleteAtEnd}
          onChange={(e) => set("oneOff", { ...form.oneOff, deleteAtEnd: e.target.checked })}
        />
        <Input
          label="Plan ends on (total cost of ownership to that day)"
          type="date"
          value={form.planEnd}
          onChange={(e) => set("planEnd", e.target.value)}
          error={errors.planEnd}
          hint="empty: the months below set the period; the plan starts today"
        />
      </details>

      <details className="planner-form__more">
        <summary>Period, overwrites, early deletion, fixed costs</summary>
        <div className="form-row">
          <Input
            label="Months"
            inputMode="numeric"
            value={form.months}
            onChange={(e) => set("months", e.target.value)}
            error={errors.months}
          />
          <Input
            label="Full overwrites per month"
            inputMode="decimal"
            value={form.writesPerMonth}
            onChange={(e) => set("writesPerMonth", e.target.value)}
            error={errors.writesPerMonth}
          />
        </div>
        <div className="form-row">
          <Input
            label="Deleted early (% per month)"
            inputMode="decimal"
            value={form.earlyDeletionPercent}
            onChange={(e) => set("earlyDeletionPercent", e.target.value)}
            error={errors.earlyDeletionPercent}
          />
          <Input
            label="…at an age of (days)"
            inputMode="decimal"
            value={form.earlyDeletionAgeDays}
            onChange={(e) => set("earlyDeletionAgeDays", e.target.value)}
            error={errors.earlyDeletionAgeDays}
          />
        </div>
        <p className="planner-form__label">Fixed monthly costs (USD), added to every tier</p>
        {form.fixedCosts.map((row, i) => (
          <div className="form-row form-row--with-action" key={`fixed-${i.toString()}`}>
            <Input
              label="Item"
              value={row.name}
              onChange={(e) =>
                set(
                  "fixedCosts",
                  form.fixedCosts.map((r, j) => (j === i ? { ...r, name: e.target.value } : r)),
                )
              }
              error={errors[`fixed.${i}.name`]}
            />
            <Input
              label="USD per month"
              inputMode="decimal"
              value={row.monthly}
              onChange={(e) =>
                set(
                  "fixedCosts",
                  form.fixedCosts.map((r, j) => (j === i ? { ...r, monthly: e.target.value } : r)),
                )
              }
              error={errors[`fixed.${i}.monthly`]}
            />
            <Button
              size="sm"
              variant="ghost"
              aria-label={`Remove ${row.name || "cost"}`}
              onClick={() =>
                set(
                  "fixedCosts",
                  form.fixedCosts.filter((_, j) => j !== i),
                )
              }
            >
              Remove
            </Button>
          </div>
        ))}
        <Button size="sm" onClick={() => set("fixedCosts", [...form.fixedCosts, { name: "", monthly: "" }])}>
          Add a fixed cost
        </Button>
      </details>

      <fieldset>
        <legend>Lifecycle policy</legend>
        <Checkbox
          label="Simulate moving data down the tiers with age"
          checked={form.lifecycleOn}
          onChange={(e) => set("lifecycleOn", e.target.checked)}
        />
        {form.lifecycleOn ? (
          <>
            <div className="form-row">
              <Input
                label="Horizon (months)"
                inputMode="numeric"
                value={form.lifecycle.horizonMonths}
                onChange={(e) => setLc("horizonMonths", e.target.value)}
                error={errors["lifecycle.horizonMonths"]}
              />
              <Input
                label="New data (GiB per month)"
                inputMode="decimal"
                value={form.lifecycle.ingestGibPerMonth}
                onChange={(e) => setLc("ingestGibPerMonth", e.target.value)}
                error={errors["lifecycle.ingestGibPerMonth"]}
              />
            </div>
            <div className="form-row">
              <Input
                label="Data at the start (GiB)"
                inputMode="decimal"
                value={form.lifecycle.initialGib}
                onChange={(e) => setLc("initialGib", e.target.value)}
                error={errors["lifecycle.initialGib"]}
              />
              <Select
                label="New data lands in"
                value={form.lifecycle.start}
                onChange={(e) => setLc("start", e.target.value)}
                options={tierSelect}
              />
            </div>
            {form.lifecycle.rules.map((rule, i) => (
              <div className="form-row form-row--with-action" key={`rule-${i.toString()}`}>
                <Input
                  label={`Move after (days)`}
                  inputMode="numeric"
                  value={rule.afterDays}
                  onChange={(e) =>
                    setLc(
                      "rules",
                      form.lifecycle.rules.map((r, j) => (j === i ? { ...r, afterDays: e.target.value } : r)),
                    )
                  }
                  error={errors[`lifecycle.rules.${i}`]}
                />
                <Select
                  label="to"
                  value={rule.to}
                  onChange={(e) =>
                    setLc(
                      "rules",
                      form.lifecycle.rules.map((r, j) => (j === i ? { ...r, to: e.target.value } : r)),
                    )
                  }
                  options={tierSelect}
                />
                <Button
                  size="sm"
                  variant="ghost"
                  aria-label={`Remove rule ${i + 1}`}
                  onClick={() =>
                    setLc(
                      "rules",
                      form.lifecycle.rules.filter((_, j) => j !== i),
                    )
                  }
                >
                  Remove
                </Button>
              </div>
            ))}
            <Button
              size="sm"
              onClick={() =>
                setLc("rules", [
                  ...form.lifecycle.rules,
                  {
                    afterDays: "",
                    to: form.tiers[form.tiers.length - 1] ?? "",
                  },
                ])
              }
            >
              Add a transition
            </Button>
            <div className="form-row">
              <Input
                label="Reads per month when new"
                inputMode="decimal"
                value={form.lifecycle.initialReads}
                onChange={(e) => setLc("initialReads", e.target.value)}
                error={errors["lifecycle.initialReads"]}
              />
              <Input
                label="Reads halve every (months)"
                inputMode="decimal"
                value={form.lifecycle.halfLifeMonths}
                onChange={(e) => setLc("halfLifeMonths", e.target.value)}
                error={errors["lifecycle.halfLifeMonths"]}
              />
            </div>
            <div className="form-row">
              <Input
                label="Delete after (days, optional)"
                inputMode="numeric"
                value={form.lifecycle.expireAfterDays}
                onChange={(e) => setLc("expireAfterDays", e.target.value)}
                error={errors["lifecycle.expireAfterDays"]}
              />
              <Checkbox
                label="Search the cheapest transition days"
                checked={form.lifecycle.search}
                onChange={(e) => setLc("search", e.target.checked)}
              />
            </div>
          </>
        ) : null}
      </fieldset>

      <fieldset>
        <legend>Hybrid plan</legend>
        <Checkbox
          label="Split the data across tiers"
          checked={form.hybridOn}
          onChange={(e) => set("hybridOn", e.target.checked)}
        />
        {form.hybridOn ? (
          <>
            {form.hybrid.parts.map((part, i) => (
              <div className="form-row form-row--three" key={`part-${i.toString()}`}>
                <Select
                  label={`Part ${i + 1}`}
                  value={part.tier}
                  onChange={(e) =>
                    set("hybrid", {
                      ...form.hybrid,
                      parts: form.hybrid.parts.map((p, j) => (j === i ? { ...p, tier: e.target.value } : p)),
                    })
                  }
                  options={tierSelect}
                />
                <Input
                  label="Data (%)"
                  inputMode="decimal"
                  value={part.dataPercent}
                  onChange={(e) =>
                    set("hybrid", {
                      ...form.hybrid,
                      parts: form.hybrid.parts.map((p, j) =>
                        j === i ? { ...p, dataPercent: e.target.value } : p,
                      ),
                    })
                  }
                  error={errors[`hybrid.${i}.data`]}
                />
                <Input
                  label="Downloads (%)"
                  inputMode="decimal"
                  value={part.readPercent}
                  onChange={(e) =>
                    set("hybrid", {
                      ...form.hybrid,
                      parts: form.hybrid.parts.map((p, j) =>
                        j === i ? { ...p, readPercent: e.target.value } : p,
                      ),
                    })
                  }
                  error={errors[`hybrid.${i}.read`]}
                />
              </div>
            ))}
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
