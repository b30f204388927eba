import { Button } from "./Button";
import { FieldList, type FieldSpec, type FieldValue } from "./FieldList";

/** Rows of the same fields (fixed costs, transitions, hybrid parts), each optionally with a Remove button. */
export function FieldRows<R extends Record<Extract<keyof R, string>, FieldValue>>({
  rows,
  fields,
  errors,
  className = "form-row form-row--with-action",
  removeLabel,
  onChange,
  keyPrefix,
}: {
  rows: R[];
  fields: (index: number) => Array<FieldSpec<Extract<keyof R, string>>>;
  errors?: (index: number) => Partial<Record<string, string>>;
  className?: string;
  /** The Remove button's accessible name; without it the rows cannot be removed. */
  removeLabel?: (row: R, index: number) => string;
  onChange: (rows: R[]) => void;
  keyPrefix: string;
}) {
  return (
    <>
      {rows.map((row, i) => (
        <div className={className} key={`${keyPrefix}-${i.toString()}`}>
          <FieldList
            fields={fields(i)}
            values={row}
            errors={errors?.(i)}
            onChange={(name, value) => onChange(rows.map((r, j) => (j === i ? { ...r, [name]: value } : r)))}
          />
          {removeLabel ? (
            <Button
              size="sm"
              variant="ghost"
              aria-label={removeLabel(row, i)}
              onClick={() => onChange(rows.filter((_, j) => j !== i))}
            >
              Remove
            </Button>
          ) : null}
        </div>
      ))}
    </>
  );
}
