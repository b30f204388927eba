import { type HTMLAttributes, type ReactNode, useId } from "react";
import { cx } from "./cx";

export interface CardProps extends Omit<HTMLAttributes<HTMLElement>, "title"> {
  title?: ReactNode;
  description?: ReactNode;
  /** Buttons or links at the right of the header. */
  actions?: ReactNode;
  /** Heading level of the title; pages use h2 for cards under their h1. */
  level?: 2 | 3;
  padded?: boolean;
}

/** A titled surface; with a title it is a labelled region for assistive technology. */
export function Card({
  title,
  description,
  actions,
  level = 2,
  padded = true,
  className,
  children,
  ...rest
}: CardProps) {
  const id = useId();
  const Heading = level === 2 ? "h2" : "h3";
  return (
    <section
      className={cx("ui-card", padded ? null : "ui-card--flush", className)}
      aria-labelledby={title ? id : undefined}
      {...rest}
    >
      {title || actions ? (
        <header className="ui-card__header">
          <div className="ui-card__titles">
            {title ? (
              <Heading id={id} className="ui-card__title">
                {title}
              </Heading>
            ) : null}
            {description ? <p className="ui-card__description">{description}</p> : null}
          </div>
          {actions ? <div className="ui-card__actions">{actions}</div> : null}
        </header>
      ) : null}
      <div className="ui-card__body">{children}</div>
    </section>
  );
}

/** A single figure with its label, for the stat row at the top of a page. */
export function Stat({ label, value, detail }: { label: ReactNode; value: ReactNode; detail?: ReactNode }) {
  return (
    <div className="ui-card ui-stat">
      <p className="ui-stat__label">{label}</p>
      <p className="ui-stat__value">{value}</p>
      {detail ? <div className="ui-stat__detail">{detail}</div> : null}
    </div>
  );
}
