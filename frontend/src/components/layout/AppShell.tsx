import { Link, useNavigate, useRouterState } from "@tanstack/react-router";
import { type ReactNode, useEffect, useState } from "react";
import { type User, useLogout } from "@/api/auth";
import { Badge, Button } from "@/components/ui";
import { icons } from "./icons";
import { NAV_ITEMS } from "./nav-items";

/** Sidebar navigation at desktop widths; a top bar with a disclosure menu on narrow screens. */
export function AppShell({ user, children }: { user: User; children: ReactNode }) {
  const [menuOpen, setMenuOpen] = useState(false);
  const pathname = useRouterState({ select: (s) => s.location.pathname });
  const navigate = useNavigate();
  const logout = useLogout();

  // A page change from anywhere (back button, a link in the page) closes the collapsed menu too.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on navigation on purpose.
  useEffect(() => setMenuOpen(false), [pathname]);

  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setMenuOpen(false);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [menuOpen]);

  const signOut = () =>
    logout.mutate(undefined, {
      onSettled: () => navigate({ to: "/login", search: { redirect: undefined } }),
    });

  return (
    <div className="app-shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-topbar">
        <div className="app-brand">
          {icons.logo}
          <span>tierpilot</span>
        </div>
        <button
          type="button"
          className="app-topbar__menu"
          aria-expanded={menuOpen}
          aria-controls="app-nav"
          onClick={() => setMenuOpen((o) => !o)}
        >
          {menuOpen ? icons.close : icons.menu}
          <span>Menu</span>
        </button>
      </header>
      <nav id="app-nav" className="app-nav" data-open={menuOpen || undefined} aria-label="Main">
        <div className="app-brand app-nav__brand">
          {icons.logo}
          <span>tierpilot</span>
        </div>
        <ul className="app-nav__list">
          {NAV_ITEMS.map((item) => (
            <li key={item.to}>
              <Link
                to={item.to}
                className="app-nav__link"
                activeOptions={{ exact: item.to === "/" }}
                activeProps={{ className: "is-active" }}
                onClick={() => setMenuOpen(false)}
              >
                {icons[item.icon]}
                <span>{item.label}</span>
              </Link>
            </li>
          ))}
        </ul>
        <div className="app-nav__user">
          <div className="app-nav__who">
            <span className="app-nav__username" title={user.username}>
              {user.username}
            </span>
            <Badge tone={user.is_admin ? "info" : "neutral"}>{user.role}</Badge>
          </div>
          <Button size="sm" variant="secondary" onClick={signOut} loading={logout.isPending}>
            Sign out
          </Button>
        </div>
      </nav>
      <main id="main" className="app-main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
