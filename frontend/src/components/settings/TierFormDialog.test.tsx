import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Tier } from "@/api/tiers";
import { installFakeApi, type RecordedRequest } from "@/test/fake-api";
import { TierFormDialog } from "./TierFormDialog";

afterEach(() => vi.unstubAllGlobals());

const EGRESS = "Reads leave the provider by";

function tier(driver: string, priceRef: Record<string, string>): Tier {
  return {
    id: 7,
    name: "tokyo",
    driver,
    location: null,
    config:
      driver === "posix"
        ? { path: "/data/tiers/tokyo" }
        : {
            endpoint_url: "https://s3.ap-northeast-1.amazonaws.com",
            region: "ap-northeast-1",
            bucket: "belle2-archive",
            prefix: "",
            storage_class: "STANDARD",
          },
    has_secret: false,
    storage_classes: ["STANDARD"],
    offline: false,
    restore_delays: {},
    price_ref: priceRef,
    capacity_bytes: null,
    min_storage_days: 0,
    created_at: "2026-11-22T10:00:00Z",
    used_bytes: 0,
    object_count: 0,
    bucket_count: 0,
  };
}

function renderDialog(t: Tier) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const { requests } = installFakeApi({
    "GET /api/pricing/catalogs": () => ({
      body: [
        {
          id: "aws-ap-northeast-1-2026",
          provider: "aws",
          region: "ap-northeast-1",
          classes: ["STANDARD", "GLACIER"],
        },
      ],
    }),
    "PATCH /api/tiers/7": (req) => ({ body: { ...t, price_ref: (req.body as Tier).price_ref } }),
  });
  render(
    <QueryClientProvider client={client}>
      <TierFormDialog open tier={t} onClose={() => {}} />
    </QueryClientProvider>,
  );
  return requests;
}

async function patchedPriceRef(requests: RecordedRequest[]): Promise<unknown> {
  const patch = await vi.waitFor(() => {
    const found = requests.find((r) => r.method === "PATCH");
    if (!found) throw new Error("no PATCH yet");
    return found;
  });
  return (patch.body as { price_ref: unknown }).price_ref;
}

describe("TierFormDialog egress destination", () => {
  it("shows a cloud tier's stored destination and saves the one chosen in its price reference", async () => {
    const ref = { catalog: "aws-ap-northeast-1-2026", storage_class: "STANDARD" };
    const requests = renderDialog(tier("s3", { ...ref, egress: "research-network" }));
    const field = await screen.findByLabelText(EGRESS);
    expect(field).toHaveValue("research-network");
    expect(screen.getByText(/Egress is billed where bytes leave the tier's provider/)).toBeInTheDocument();
    await screen.findByRole("option", { name: /aws-ap-northeast-1-2026/ });
    expect(field).toBeEnabled();
    await userEvent.selectOptions(field, "same-region");
    await userEvent.click(screen.getByRole("button", { name: "Save tier" }));
    expect(await patchedPriceRef(requests)).toEqual({ ...ref, egress: "same-region" });
  });

  it("leaves the key out for the internet, the server's default", async () => {
    const ref = { catalog: "aws-ap-northeast-1-2026", storage_class: "STANDARD" };
    const requests = renderDialog(tier("s3", { ...ref, egress: "same-region" }));
    const field = await screen.findByLabelText(EGRESS);
    await screen.findByRole("option", { name: /aws-ap-northeast-1-2026/ });
    await userEvent.selectOptions(field, "internet");
    await userEvent.click(screen.getByRole("button", { name: "Save tier" }));
    expect(await patchedPriceRef(requests)).toEqual(ref);
  });

  it("has nothing to choose for a posix tier: its reads leave no provider", async () => {
    renderDialog(tier("posix", { catalog: "aws-ap-northeast-1-2026", storage_class: "STANDARD" }));
    expect(await screen.findByLabelText("Price catalog")).toBeInTheDocument();
    expect(screen.queryByLabelText(EGRESS)).not.toBeInTheDocument();
  });
});
