import type { ReactNode } from "react";

export interface EmptyStateProps {
  title: ReactNode;
  description?: ReactNode;
  /** A decorative glyph; hidden from assistive technology. */
  icon?: ReactNode;
  action?: ReactNode;
  children?: ReactNode;
  /** 2 for a whole page's empty state, 3 inside a card titled with an h2. */
  level?: 2 | 3;
}

export function EmptyState({ title, description, icon, action, children, level = 3 }: EmptyStateProps) {
  const Heading = level === 2 ? "h2" : "h3";
  return (
    <div className="ui-empty">
      {icon ? (
        <div className="ui-empty__icon" aria-hidden="true">
          {icon}
        </div>
      ) : null}
      <Heading className="ui-empty__title">{title}</Heading>
      {description ? <p className="ui-empty__description">{description}</p> : null}
      {children}
      {action ? <div className="ui-empty__action">{action}</div> : null}
    </div>
  );
}
