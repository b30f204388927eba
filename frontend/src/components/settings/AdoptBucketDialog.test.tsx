import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { TiersSection } from "./TiersSection";

afterEach(() => vi.unstubAllGlobals());

function renderSection() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <TiersSection />
    </QueryClientProvider>,
  );
}

function tier(id: number, name: string, driver: string) {
  return {
    id,
    name,
    driver,
    location: `somewhere/${name}`,
    config: {},
    has_secret: false,
    storage_classes: ["STANDARD"],
    offline: false,
    restore_delays: {},
    price_ref: {},
    capacity_bytes: null,
    min_storage_days: 0,
    created_at: "2026-11-22T10:00:00Z",
    used_bytes: 0,
    object_count: 0,
    bucket_count: 0,
  };
}

function job(state: string, listed: number, added: number) {
  return {
    id: 7,
    tier_id: 2,
    remote_bucket: "old-data",
    bucket: "mirror",
    state,
    listed,
    added,
    removed: 0,
    requests: 3,
    error: null,
    created_at: "2026-11-25T00:00:00Z",
    started_at: null,
    updated_at: "2026-11-25T00:00:00Z",
    scanned_at: null,
  };
}

describe("AdoptBucketDialog", () => {
  it("offers adoption on remote tiers only, queues it and follows its progress", async () => {
    let polls = 0;
    const { requests } = installFakeApi({
      "GET /api/tiers": () => ({ body: [tier(1, "disk", "posix"), tier(2, "blobs", "azure")] }),
      "POST /api/tiers/2/adopt": () => ({ status: 202, body: job("queued", 0, 0) }),
      "GET /api/tiers/2/adopt/7": () => {
        polls += 1;
        return { body: polls > 1 ? job("done", 1200, 1200) : job("running", 500, 400) };
      },
    });
    renderSection();
    await userEvent.click(await screen.findByRole("button", { name: "Adopt a bucket on blobs" }));
    expect(screen.queryByRole("button", { name: "Adopt a bucket on disk" })).not.toBeInTheDocument();
    const dialog = screen.getByRole("dialog", { name: "Adopt a bucket on blobs" });
    await userEvent.type(within(dialog).getByLabelText("Remote container"), "old-data");
    await userEvent.type(within(dialog).getByLabelText(/Local bucket/), "mirror");
    await userEvent.click(within(dialog).getByRole("button", { name: "Adopt" }));
    expect(
      await within(dialog).findByText(/1,200 objects listed, 1,200 added/, {}, { timeout: 4000 }),
    ).toBeInTheDocument();
    expect(within(dialog).getByText("done")).toBeInTheDocument();
    const posted = requests.filter((r) => r.method === "POST");
    expect(posted.map((r) => [r.path, r.body])).toEqual([
      ["/api/tiers/2/adopt", { bucket: "old-data", into: "mirror", owner: null }],
    ]);
  });

  it("shows a refusal under the field it names and stays open", async () => {
    installFakeApi({
      "GET /api/tiers": () => ({ body: [tier(2, "cloud", "gcs")] }),
      "POST /api/tiers/2/adopt": () => ({
        status: 422,
        body: {
          detail: "bucket 'gone' is not found or not readable on the tier's endpoint",
          field: "bucket",
        },
      }),
    });
    renderSection();
    await userEvent.click(await screen.findByRole("button", { name: "Adopt a bucket on cloud" }));
    const dialog = screen.getByRole("dialog", { name: "Adopt a bucket on cloud" });
    const remote = within(dialog).getByLabelText("Remote bucket");
    await userEvent.type(remote, "gone");
    await userEvent.click(within(dialog).getByRole("button", { name: "Adopt" }));
    expect(await within(dialog).findByText(/not found or not readable/)).toBeInTheDocument();
    expect(remote).toHaveAttribute("aria-invalid", "true");
    expect(within(dialog).getByRole("button", { name: "Adopt" })).toBeInTheDocument();
  });
});
