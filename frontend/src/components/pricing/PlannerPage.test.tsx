import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { PlannerPage } from "./PlannerPage";

afterEach(() => vi.unstubAllGlobals());

const zero = {
  storage: 0,
  requests: 0,
  retrieval: 0,
  restore: 0,
  restored_copy: 0,
  egress: 0,
  early_deletion: 0,
  monitoring: 0,
  fixed: 0,
  total: 0,
};
const tier = (name: string, total: number) => ({
  tier: name,
  catalog: "aws-ap-northeast-1-2018",
  storage_class: name,
  name,
  restore_speed: null,
  restore_hours: null,
  min_storage_days: 0,
  min_billable_bytes: 0,
  billable_gib: 633,
  estimated: [],
  measured: false,
  monthly: { ...zero, storage: total, total },
  total: { ...zero, total: total * 12 },
  annual: total * 12,
});
const report = {
  scenario: { volume_gib: 633, objects: 1000, read_fraction: 1, egress: "same-region", egress_share: 1 },
  units: {},
  catalogs: [
    {
      id: "aws-ap-northeast-1-2018",
      provider: "aws",
      region: "ap-northeast-1",
      currency: "USD",
      valid_from: "2018-07-01",
      source: ["case study"],
      has_estimates: true,
    },
  ],
  months: 12,
  reads_per_month: 1,
  tiers: [tier("STANDARD", 15.83), tier("STANDARD_IA", 18.36)],
  break_even: [{ cheaper_below: "STANDARD_IA", cheaper_above: "STANDARD", reads_per_month: 0.59994 }],
  dominance: [],
  cheapest: [
    { from: 0, to: 0.59994, tier: "STANDARD_IA" },
    { from: 0.59994, to: null, tier: "STANDARD" },
  ],
  sweep: {
    reads_per_month: [0.01, 1, 100],
    totals: { STANDARD: [15.8, 15.8, 16], STANDARD_IA: [12, 18, 650] },
  },
  hybrid: [],
  lifecycle: null,
  notes: [],
};
const catalog = {
  id: "aws-ap-northeast-1-2018",
  provider: "aws",
  region: "ap-northeast-1",
  currency: "USD",
  valid_from: "2018-07-01",
  source: ["case study"],
  estimated: [],
  notes: "",
  egress: {},
  classes: [
    { id: "STANDARD", name: "S3 Standard", storage: [{ up_to_gib: null, price: 0.025 }], restore: {} },
    { id: "STANDARD_IA", name: "S3 Standard-IA", storage: [{ up_to_gib: null, price: 0.019 }], restore: {} },
  ],
};

function routes() {
  return {
    "GET /api/pricing/catalogs": () => ({
      body: [
        {
          id: catalog.id,
          provider: "aws",
          region: "ap-northeast-1",
          currency: "USD",
          valid_from: "2018-07-01",
          source: [],
          classes: ["STANDARD", "STANDARD_IA"],
          has_estimates: true,
          origin: "shipped",
        },
      ],
    }),
    "GET /api/pricing/catalogs/aws-ap-northeast-1-2018": () => ({ body: catalog }),
    "GET /api/pricing/scenarios": () => ({ body: [] }),
    "POST /api/pricing/evaluate": () => ({ body: report }),
  };
}

function renderPage() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <PlannerPage />
    </QueryClientProvider>,
  );
}

describe("PlannerPage", () => {
  it("prices the default scenario and re-prices when the user types", async () => {
    const { requests } = installFakeApi(routes());
    renderPage();
    const list = await screen.findByRole("list", { name: "Break-even points" });
    expect(list).toHaveTextContent("STANDARD_IA is cheaper than STANDARD below 0.6 full reads a month");
    const evaluations = () => requests.filter((r) => r.path === "/api/pricing/evaluate");
    expect(evaluations()).toHaveLength(1);
    expect(evaluations()[0]?.body).toMatchObject({
      volume_gib: 633,
      objects: 1000,
      catalog: "aws-ap-northeast-1-2018",
    });

    const volume = screen.getByLabelText("Stored volume");
    await userEvent.clear(volume);
    await userEvent.type(volume, "2048");
    await vi.waitFor(() => expect(evaluations().at(-1)?.body).toMatchObject({ volume_gib: 2048 }), {
      timeout: 3000,
    });
    // typing "2048" is one pause, not four evaluations
    expect(evaluations().length).toBeLessThanOrEqual(3);
    // a volume is typed in the unit chosen beside it, and sent in GiB
    await userEvent.clear(volume);
    await userEvent.type(volume, "200");
    await userEvent.selectOptions(screen.getByLabelText("Unit"), "TiB");
    await vi.waitFor(() => expect(evaluations().at(-1)?.body).toMatchObject({ volume_gib: 204800 }), {
      timeout: 3000,
    });
  }, 20_000);

  it("marks a field to fix and sends nothing until it is fixed", async () => {
    const { requests } = installFakeApi(routes());
    renderPage();
    await screen.findByRole("list", { name: "Break-even points" });
    const objects = screen.getByLabelText("Objects");
    await userEvent.clear(objects);
    await userEvent.type(objects, "many");
    expect(await screen.findByText("Enter a number")).toBeInTheDocument();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(requests.filter((r) => r.path === "/api/pricing/evaluate")).toHaveLength(1);
  }, 20_000);

  it("shows the server's reason when a scenario cannot be priced", async () => {
    installFakeApi({
      ...routes(),
      "POST /api/pricing/evaluate": () => ({
        status: 422,
        body: { detail: "tier NEARLINE: catalog has no class NEARLINE" },
      }),
    });
    renderPage();
    expect(await screen.findByRole("alert")).toHaveTextContent("catalog has no class NEARLINE");
  });
});
