import type { ReactNode } from "react";
import { Checkbox, Field, Input, Select, type SelectOption } from "./Field";

export type FieldKind = "number" | "text" | "password" | "date" | "textarea" | "select" | "checkbox";

/** One input of a form, described as data: a form is a list of these. */
export interface FieldSpec<K extends string = string> {
  /** The key of the value the field edits (and of its error). */
  name: K;
  /** The visible label, with the unit in brackets: "Stored volume (GiB)". */
  label: string;
  kind: FieldKind;
  /** 1 for whole numbers (a numeric keyboard), else decimals; bounds are checked by the form's validator. */
  step?: number;
  help?: ReactNode;
  options?: SelectOption[];
  placeholder?: string;
  disabled?: boolean;
  autoComplete?: string;
  spellCheck?: boolean;
  maxLength?: number;
  rows?: number;
}

/** A field, or a row of fields laid out side by side. */
export type FieldLayout<K extends string = string> = FieldSpec<K> | Array<FieldSpec<K>>;

export type FieldValue = string | boolean;

/** The keys of a form's state that a field can edit (text or a checkbox's boolean). */
export type FieldKey<T> = Extract<{ [P in keyof T]: T[P] extends FieldValue ? P : never }[keyof T], string>;

export interface FieldListProps<K extends string> {
  fields: Array<FieldLayout<K> | false | null | undefined>;
  values: Readonly<Record<NoInfer<K>, FieldValue>>;
  errors?: Readonly<Partial<Record<string, string>>>;
  /** Prefix of the fields' keys in `errors` ("lifecycle." for nested state). */
  errorPrefix?: string;
  onChange: (name: K, value: FieldValue) => void;
  /** The class of the element around each row of fields. */
  rowClassName?: string;
}

/** Number fields stay text inputs: what was typed stays as typed until the validator reads it. */
function inputModeOf(spec: FieldSpec): "numeric" | "decimal" | undefined {
  if (spec.kind !== "number") return undefined;
  return spec.step === 1 ? "numeric" : "decimal";
}

function FieldControl<K extends string>({
  spec,
  value,
  error,
  onChange,
}: {
  spec: FieldSpec<K>;
  value: FieldValue;
  error?: string;
  onChange: (name: K, value: FieldValue) => void;
}) {
  const common = { label: spec.label, hint: spec.help, disabled: spec.disabled };
  switch (spec.kind) {
    case "checkbox":
      return (
        <Checkbox
          {...common}
          checked={value === true}
          onChange={(e) => onChange(spec.name, e.target.checked)}
        />
      );
    case "select":
      return (
        <Select
          {...common}
          error={error}
          value={String(value)}
          options={spec.options ?? []}
          onChange={(e) => onChange(spec.name, e.target.value)}
        />
      );
    case "textarea":
      return (
        <Field label={spec.label} hint={spec.help} error={error}>
          {(control) => (
            <textarea
              {...control}
              className="ui-input"
              rows={spec.rows}
              spellCheck={spec.spellCheck}
              autoComplete={spec.autoComplete}
              disabled={spec.disabled}
              value={String(value)}
              onChange={(e) => onChange(spec.name, e.target.value)}
            />
          )}
        </Field>
      );
    default:
      return (
        <Input
          {...common}
          error={error}
          type={spec.kind === "password" || spec.kind === "date" ? spec.kind : undefined}
          inputMode={inputModeOf(spec)}
          placeholder={spec.placeholder}
          autoComplete={spec.autoComplete}
          spellCheck={spec.spellCheck}
          maxLength={spec.maxLength}
          value={String(value)}
          onChange={(e) => onChange(spec.name, e.target.value)}
        />
      );
  }
}

/** Renders a form's fields from their descriptions; rows of fields sit side by side. */
export function FieldList<K extends string>({
  fields,
  values,
  errors = {},
  errorPrefix = "",
  onChange,
  rowClassName = "form-row",
}: FieldListProps<K>) {
  const control = (spec: FieldSpec<K>) => (
    <FieldControl
      key={spec.name}
      spec={spec}
      value={values[spec.name]}
      error={errors[`${errorPrefix}${spec.name}`]}
      onChange={onChange}
    />
  );
  return (
    <>
      {fields.map((item) => {
        if (!item) return null;
        if (!Array.isArray(item)) return control(item);
        return (
          <div className={rowClassName} key={item.map((f) => f.name).join("+")}>
            {item.map(control)}
          </div>
        );
      })}
    </>
  );
}
