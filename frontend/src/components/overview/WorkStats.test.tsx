import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { WorkStats } from "./WorkStats";

// each figure links to its page; here only the link's text and target matter
vi.mock("@tanstack/react-router", () => ({
  Link: ({ children, to }: { children: ReactNode; to: string }) => <a href={to}>{children}</a>,
}));

afterEach(() => vi.unstubAllGlobals());

const spend = { so_far: 412.5, forecast: 1280, days_elapsed: 9.6, days_in_month: 30 };
const queue = {
  summary: { batches_by_state: { in_progress: 2, failed: 1 }, single_restores_active: 1 },
  batches: { items: [] },
};
const project = (name: string, quota: number | null, used: number) => ({
  name,
  personal: false,
  quota_bytes: quota,
  quota_objects: null,
  used_bytes: used,
  used_objects: 0,
  members: [],
  buckets: [],
  created_at: "2026-01-01T00:00:00Z",
});

function renderStats(projects: unknown[]) {
  const api = installFakeApi({
    "GET /api/spend": () => ({ body: spend }),
    "GET /api/restores/queue": () => ({ body: queue }),
    "GET /api/lifecycle/moves": () => ({
      body: { moves: [], counts: { failed: 3, queued: 4 }, next_before_id: null },
    }),
    "GET /api/integrity/buckets": () => ({
      body: [
        {
          bucket: "a",
          objects: 5,
          checks: 5,
          checked_objects: 5,
          last_check_at: null,
          failures: 0,
          failing: [],
        },
      ],
    }),
    "GET /api/projects": () => ({ body: projects }),
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <WorkStats isAdmin={false} />
    </QueryClientProvider>,
  );
  return api;
}

describe("WorkStats", () => {
  it("says spend, restores, failed moves and fixity, each linking to its page", async () => {
    const api = renderStats([project("ml", 1000, 970)]);
    expect(await screen.findByText("$412.50")).toBeInTheDocument();
    expect(screen.getByText(/forecast \$1,280\.00 by month end/)).toBeInTheDocument();
    expect(await screen.findByText("3 in flight")).toBeInTheDocument();
    expect(screen.getByText("1 failed batches to look at")).toBeInTheDocument();
    expect(await screen.findByText("3 failed")).toHaveClass("work-stat__alarm");
    expect(screen.getByText(/waiting for a retry · 4 queued or running/)).toBeInTheDocument();
    expect(await screen.findByText("no failures")).toBeInTheDocument();
    expect(await screen.findByText("97 % used")).toHaveClass("work-stat__alarm");
    expect(screen.getByRole("link", { name: "Spend this month" })).toHaveAttribute("href", "/spend");
    expect(screen.getByRole("link", { name: "Restores" })).toHaveAttribute("href", "/restores");
    expect(screen.getByRole("link", { name: "Lifecycle moves" })).toHaveAttribute("href", "/lifecycle");
    expect(screen.getByRole("link", { name: "Fixity" })).toHaveAttribute("href", "/integrity");
    expect(screen.getByRole("link", { name: "Project quotas" })).toHaveAttribute("href", "/projects");
    const restores = api.requests.find((r) => r.path === "/api/restores/queue");
    expect(restores?.query.get("scope")).toBe("mine");
  });

  it("leaves quotas out when no project has one", async () => {
    renderStats([project("free", null, 10)]);
    await screen.findByText("no failures");
    await vi.waitFor(() => expect(screen.queryByRole("link", { name: "Project quotas" })).toBeNull());
  });
});
