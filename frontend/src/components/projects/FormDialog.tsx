import type { FormEvent } from "react";
import { Button, Dialog, ErrorBanner, type FieldLayout, FieldList, type FieldValue } from "@/components/ui";

/** A dialog around one FieldList form: field errors beside their fields, anything else above them. */
export function FormDialog<K extends string>({
  open,
  title,
  description,
  submitLabel,
  fields,
  values,
  errors,
  error,
  pending,
  onChange,
  onSubmit,
  onClose,
}: {
  open: boolean;
  title: string;
  description?: string;
  submitLabel: string;
  fields: Array<FieldLayout<K>>;
  values: Readonly<Record<K, FieldValue>>;
  errors: Readonly<Partial<Record<string, string>>>;
  /** The refusal, shown as a banner when it names none of the fields. */
  error: unknown;
  pending: boolean;
  onChange: (name: K, value: FieldValue) => void;
  onSubmit: () => void;
  onClose: () => void;
}) {
  const formId = `form-${title.replace(/\W+/g, "-").toLowerCase()}`;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit();
  };
  const unplaced = error && !Object.keys(errors).length;
  return (
    <Dialog
      open={open}
      onClose={onClose}
      title={title}
      description={description}
      footer={
        <>
          <Button variant="ghost" onClick={onClose}>
            Cancel
          </Button>
          <Button variant="primary" type="submit" form={formId} disabled={pending}>
            {pending ? "Saving…" : submitLabel}
          </Button>
        </>
      }
    >
      <form id={formId} className="stack" onSubmit={submit} noValidate aria-label={title}>
        {unplaced ? <ErrorBanner title="Not saved" error={error} /> : null}
        <FieldList fields={fields} values={values} errors={errors} onChange={onChange} />
      </form>
    </Dialog>
  );
}
