import type { ReactNode } from "react";

export interface EmptyStateProps {
  title: ReactNode;
  description?: ReactNode;
  /** A decorative glyph; hidden from assistive technology. */
  icon?: ReactNode;
  action?: ReactNode;
  children?: ReactNode;
}

export function EmptyState({ title, description, icon, action, children }: EmptyStateProps) {
  return (
    <div className="ui-empty">
      {icon ? (
        <div className="ui-empty__icon" aria-hidden="true">
          {icon}
        </div>
      ) : null}
      <h2 className="ui-empty__title">{title}</h2>
      {description ? <p className="ui-empty__description">{description}</p> : null}
      {children}
      {action ? <div className="ui-empty__action">{action}</div> : null}
    </div>
  );
}
