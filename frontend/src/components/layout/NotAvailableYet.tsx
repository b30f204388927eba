import type { ReactNode } from "react";
import { EmptyState, PageHeader } from "@/components/ui";
import { icons } from "./icons";
import type { NavItem } from "./nav-items";

/** A page whose backend is not built yet: says what it will do, so nobody mistakes it for broken. */
export function NotAvailableYet({
  title,
  icon,
  summary,
  features,
}: {
  title: string;
  icon: NavItem["icon"];
  summary: string;
  features: ReactNode[];
}) {
  return (
    <>
      <PageHeader title={title} description={summary} />
      <EmptyState
        icon={icons[icon]}
        title="Not available yet"
        level={2}
        description={`${title} is not part of this version of the dashboard yet. When it is, this page will let you:`}
      >
        <ul className="planned-features">
          {features.map((f, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a fixed, never reordered list.
            <li key={i}>{f}</li>
          ))}
        </ul>
      </EmptyState>
    </>
  );
}
