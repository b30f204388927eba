import { cx } from "./cx";

export function Spinner({ size = "md", label }: { size?: "sm" | "md"; label?: string }) {
  return (
    <span className={cx("ui-spinner", `ui-spinner--${size}`)} role={label ? "status" : undefined}>
      {label ? <span className="visually-hidden">{label}</span> : null}
    </span>
  );
}

/** A centred spinner for a region whose data is on its way. */
export function LoadingState({ label = "Loading…" }: { label?: string }) {
  return (
    <div className="ui-loading" role="status" aria-live="polite">
      <Spinner />
      <span>{label}</span>
    </div>
  );
}
