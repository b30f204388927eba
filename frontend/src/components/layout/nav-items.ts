import type { icons } from "./icons";

export interface NavItem {
  to:
    | "/"
    | "/reservations"
    | "/restores"
    | "/lifecycle"
    | "/browser"
    | "/sharing"
    | "/projects"
    | "/integrity"
    | "/planner"
    | "/spend"
    | "/benchmarks"
    | "/requests"
    | "/settings";
  label: string;
  icon: keyof typeof icons;
}

/** The dashboard's pages in navigation order. */
export const NAV_ITEMS: readonly NavItem[] = [
  { to: "/", label: "Overview", icon: "overview" },
  { to: "/reservations", label: "Reservations", icon: "reservations" },
  { to: "/restores", label: "Restores", icon: "restores" },
  { to: "/lifecycle", label: "Lifecycle", icon: "lifecycle" },
  { to: "/browser", label: "Browser", icon: "browser" },
  { to: "/sharing", label: "Sharing", icon: "sharing" },
  { to: "/projects", label: "Projects", icon: "projects" },
  { to: "/integrity", label: "Integrity", icon: "integrity" },
  { to: "/planner", label: "Cost planner", icon: "planner" },
  { to: "/spend", label: "Spend", icon: "planner" },
  { to: "/benchmarks", label: "Benchmarks", icon: "benchmarks" },
  { to: "/requests", label: "Requests", icon: "benchmarks" },
  { to: "/settings", label: "Settings", icon: "settings" },
];
