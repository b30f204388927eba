import { Input, Select } from "@/components/ui";
import type { PlanField, PlanFormErrors, PlanFormValues } from "./plan-form";

const SPEEDS = [
  { value: "expedited", label: "Expedited" },
  { value: "standard", label: "Standard" },
  { value: "bulk", label: "Bulk" },
];

export interface PlanUsageFieldsProps {
  /** The form's figures (null while they are still being worked out). */
  values: PlanFormValues | null;
  errors: PlanFormErrors;
  onChange: (field: PlanField, value: string) => void;
  /** What the restores figure is priced on, as the dialog's context says it best. */
  restoresHint: string;
  /** The first field takes the focus when its dialog opens. */
  autoFocus?: boolean;
}

/** A bucket plan's month besides storage: reads, GET- and PUT-class requests, restores and their speed. */
export function PlanUsageFields({
  values,
  errors,
  onChange,
  restoresHint,
  autoFocus = false,
}: PlanUsageFieldsProps) {
  const number = (field: Exclude<PlanField, "restore_speed">) => ({
    type: "number",
    min: 0,
    inputMode: "decimal" as const,
    value: values?.[field] ?? "",
    error: errors[field],
    onChange: (e: { target: { value: string } }) => onChange(field, e.target.value),
  });
  return (
    <div className="form-grid">
      <Input
        label="Reads (GiB / month)"
        hint="Bytes read out of the bucket"
        data-autofocus={autoFocus || undefined}
        {...number("reads_gib")}
      />
      <Input label="GET-class requests / month" hint="GET, HEAD" {...number("read_requests")} />
      <Input label="PUT-class requests / month" hint="PUT, COPY, POST, LIST" {...number("write_requests")} />
      <Input label="Restores (GiB / month)" hint={restoresHint} {...number("restores_gib")} />
      <Select
        label="Restore speed"
        value={values?.restore_speed ?? "standard"}
        options={SPEEDS}
        onChange={(e) => onChange("restore_speed", e.target.value)}
      />
    </div>
  );
}
