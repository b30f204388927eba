import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { TierHealthCount, TiersSection } from "./TiersSection";

afterEach(() => vi.unstubAllGlobals());

function renderSection() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <TiersSection />
    </QueryClientProvider>,
  );
}

function tier(id: number, name: string, objects: number, buckets: number) {
  return {
    id,
    name,
    driver: "posix",
    location: `/data/tiers/${name}`,
    config: { path: `/data/tiers/${name}` },
    has_secret: false,
    storage_classes: ["STANDARD"],
    offline: false,
    restore_delays: {},
    price_ref: {},
    capacity_bytes: null,
    min_storage_days: 0,
    created_at: "2026-11-22T10:00:00Z",
    used_bytes: objects * 1000,
    object_count: objects,
    bucket_count: buckets,
  };
}

describe("TiersSection", () => {
  it("deletes an empty tier after confirmation and refreshes the list", async () => {
    let tiers = [tier(1, "hot", 3, 1), tier(2, "spare", 0, 0)];
    const { requests } = installFakeApi({
      "GET /api/tiers": () => ({ body: tiers }),
      "DELETE /api/tiers/2": () => {
        tiers = tiers.filter((t) => t.id !== 2);
        return { status: 204 };
      },
    });
    renderSection();
    expect(await screen.findByRole("button", { name: "Delete hot" })).toBeDisabled();
    await userEvent.click(screen.getByRole("button", { name: "Delete spare" }));
    const confirm = screen.getByRole("alertdialog", { name: "Delete tier spare?" });
    await userEvent.click(within(confirm).getByRole("button", { name: "Delete tier" }));
    expect(await screen.findByRole("button", { name: "Delete hot" })).toBeInTheDocument();
    expect(screen.queryByText("spare")).not.toBeInTheDocument();
    expect(requests.filter((r) => r.method === "DELETE").map((r) => r.path)).toEqual(["/api/tiers/2"]);
  });

  it("shows the server's refusal in the confirmation and keeps the tier", async () => {
    const { requests } = installFakeApi({
      "GET /api/tiers": () => ({ body: [tier(2, "spare", 0, 0)] }),
      "DELETE /api/tiers/2": () => ({
        status: 409,
        body: { detail: "tier 'spare' is the default tier of new buckets (TIERPILOT_DEFAULT_TIER)" },
      }),
    });
    renderSection();
    await userEvent.click(await screen.findByRole("button", { name: "Delete spare" }));
    const confirm = screen.getByRole("alertdialog", { name: "Delete tier spare?" });
    await userEvent.click(within(confirm).getByRole("button", { name: "Delete tier" }));
    expect(await within(confirm).findByText(/default tier of new buckets/)).toBeInTheDocument();
    await userEvent.click(within(confirm).getByRole("button", { name: "Cancel" }));
    expect(screen.getByText("spare")).toBeInTheDocument();
    expect(requests.filter((r) => r.method === "DELETE")).toHaveLength(1);
  });

  it("opens the tier form to add a tier", async () => {
    installFakeApi({
      "GET /api/tiers": () => ({ body: [] }),
      "GET /api/pricing/catalogs": () => ({ body: [] }),
    });
    renderSection();
    await userEvent.click(await screen.findByRole("button", { name: "Add tier" }));
    expect(await screen.findByRole("dialog", { name: "Add tier" })).toBeInTheDocument();
  });

  it("shows whether each tier answers, with the reason of a failure, and checks again on demand", async () => {
    let probes = 0;
    const { requests } = installFakeApi({
      "GET /api/tiers": () => ({ body: [tier(1, "hot", 3, 1), tier(2, "cloud", 0, 0)] }),
      "GET /api/tiers/health": () => {
        probes += 1;
        return {
          body: [
            {
              tier_id: 1,
              name: "hot",
              kind: "posix",
              ok: true,
              detail: "/data/tiers/hot answers",
              latency_ms: 1.4,
              checked_at: "2026-11-25T03:40:00Z",
            },
            {
              tier_id: 2,
              name: "cloud",
              kind: "s3",
              ok: probes > 1,
              detail:
                probes > 1 ? "http://127.0.0.1:9/cold answers" : "Could not connect to the endpoint URL",
              latency_ms: 12.6,
              checked_at: "2026-11-25T03:40:00Z",
            },
          ],
        };
      },
    });
    renderSection();
    const cloud = await screen.findByRole("row", { name: /cloud/ });
    expect(await within(cloud).findByText("no answer")).toBeInTheDocument();
    expect(within(cloud).getByText("Could not connect to the endpoint URL")).toBeInTheDocument();
    const hot = screen.getByRole("row", { name: /hot/ });
    expect(within(hot).getByText("answers")).toBeInTheDocument();
    expect(within(hot).getByText("1 ms")).toBeInTheDocument();

    await userEvent.click(screen.getByRole("button", { name: "Check now" }));
    expect(await within(cloud).findByText("answers")).toBeInTheDocument();
    expect(within(cloud).queryByText("no answer")).not.toBeInTheDocument();
    expect(requests.filter((r) => r.path === "/api/tiers/health")).toHaveLength(2);
  });

  it("says when the health check itself failed and keeps the tiers listed", async () => {
    installFakeApi({
      "GET /api/tiers": () => ({ body: [tier(1, "hot", 3, 1)] }),
      "GET /api/tiers/health": () => ({ status: 403, body: { detail: "admin rights required" } }),
    });
    renderSection();
    expect(await screen.findByText("Could not check the tiers' health")).toBeInTheDocument();
    expect(screen.getByText("admin rights required")).toBeInTheDocument();
    expect(within(screen.getByRole("row", { name: /hot/ })).getByText("not checked")).toBeInTheDocument();
  });

  it("counts the tiers that answer for the Overview", async () => {
    installFakeApi({
      "GET /api/tiers/health": () => ({
        body: ["hot", "cold", "cloud"].map((name, i) => ({
          tier_id: i + 1,
          name,
          kind: "posix",
          ok: name !== "cloud",
          detail: "",
          latency_ms: 1,
          checked_at: "2026-11-25T03:40:00Z",
        })),
      }),
    });
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={client}>
        <TierHealthCount />
      </QueryClientProvider>,
    );
    expect(await screen.findByText("2 of 3 answer")).toHaveAttribute("title", "no answer: cloud");
  });
});
