import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ScenarioBody } from "@/api/pricing";
import { installFakeApi } from "@/test/fake-api";
import { SaveAsPlanDialog } from "./SaveAsPlanDialog";

vi.mock("@tanstack/react-router", () => ({
  Link: ({ to, children, className }: { to: string; children: ReactNode; className?: string }) => (
    <a href={to} className={className}>
      {children}
    </a>
  ),
}));

afterEach(() => vi.unstubAllGlobals());

const scenario = {
  catalog: "aws-us-east-1-2026",
  tiers: ["STANDARD"],
  volume_gib: 100,
  objects: 1000,
} as unknown as ScenarioBody;
const usage = {
  reads_gib: 150,
  read_requests: 1304,
  write_requests: 130,
  restores_gib: 100,
  restore_speed: "expedited",
  basis: ["reads: 2 reads a month of 50% of 100 GiB, 1.5× read-ahead"],
};
const bucket = (name: string, owner = "alice") => ({
  name,
  owner,
  tier: "hot",
  region: "local",
  object_count: 0,
  used_bytes: 0,
  created_at: "2026-11-01T00:00:00Z",
});
const savedPlan = (name: string, body: object) => ({
  ...(body as object),
  bucket: name,
  updated_at: "2026-11-29T05:00:00Z",
  updated_by: "alice",
});

function renderDialog(onClose = vi.fn()) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <SaveAsPlanDialog scenario={scenario} onClose={onClose} />
    </QueryClientProvider>,
  );
  return onClose;
}

describe("SaveAsPlanDialog", () => {
  it("saves the scenario's month as the chosen bucket's plan and confirms it", async () => {
    const { requests } = installFakeApi({
      "GET /api/buckets": () => ({ body: [bucket("belle2"), bucket("atlas")] }),
      "POST /api/pricing/plan-usage": () => ({ body: usage }),
      "GET /api/spend/plans/belle2": () => ({ status: 404, body: { detail: "no usage planned" } }),
      "PUT /api/spend/plans/belle2": (req) => ({ body: savedPlan("belle2", req.body as object) }),
    });
    renderDialog();
    const form = await screen.findByRole("form", { name: "Save as a bucket's plan" });
    expect(within(form).getByLabelText("Reads (GiB / month)")).toHaveValue(150);
    expect(within(form).getByLabelText("GET-class requests / month")).toHaveValue(1304);
    expect(requests.find((r) => r.path === "/api/pricing/plan-usage")?.body).toEqual(scenario);
    // no bucket chosen: nothing is sent
    await userEvent.click(screen.getByRole("button", { name: "Save plan" }));
    expect(await screen.findByText("Choose the bucket this plan is for.")).toBeInTheDocument();
    expect(requests.filter((r) => r.method === "PUT")).toEqual([]);

    await userEvent.selectOptions(within(form).getByLabelText("Bucket"), "belle2");
    expect(await screen.findByText("belle2 has no plan yet: it plans storage only.")).toBeInTheDocument();
    await userEvent.clear(within(form).getByLabelText("PUT-class requests / month"));
    await userEvent.type(within(form).getByLabelText("PUT-class requests / month"), "200");
    await userEvent.click(screen.getByRole("button", { name: "Save plan" }));
    const status = await screen.findByRole("status");
    expect(status).toHaveTextContent(
      "Saved as the plan of belle2: 150 GiB read, 1,304 GET, 200 PUT, 100 GiB restored (expedited) a month",
    );
    expect(requests.filter((r) => r.method === "PUT").map((r) => r.body)).toEqual([
      {
        reads_gib: 150,
        read_requests: 1304,
        write_requests: 200,
        restores_gib: 100,
        restore_speed: "expedited",
      },
    ]);
    expect(screen.getByRole("link", { name: "Open Spend" })).toHaveAttribute("href", "/spend");
  });

  it("saves the scenario itself, priced at the tier chosen, when its figures are kept", async () => {
    const { requests } = installFakeApi({
      "GET /api/buckets": () => ({ body: [bucket("belle2")] }),
      "POST /api/pricing/plan-usage": () => ({ body: usage }),
      "GET /api/spend/plans/belle2": () => ({ status: 404, body: { detail: "no usage planned" } }),
      "PUT /api/spend/plans/belle2": (req) => ({ body: savedPlan("belle2", req.body as object) }),
    });
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    const two = { ...scenario, tiers: ["STANDARD", "GLACIER@bulk"], lifecycle: { horizon_months: 12 } };
    render(
      <QueryClientProvider client={client}>
        <SaveAsPlanDialog scenario={two as unknown as ScenarioBody} onClose={vi.fn()} />
      </QueryClientProvider>,
    );
    const form = await screen.findByRole("form", { name: "Save as a bucket's plan" });
    await userEvent.selectOptions(within(form).getByLabelText("Bucket"), "belle2");
    await userEvent.selectOptions(within(form).getByLabelText("Priced as"), "GLACIER@bulk");
    await userEvent.click(screen.getByRole("button", { name: "Save plan" }));
    await screen.findByRole("status");
    const puts = requests.filter((r) => r.method === "PUT");
    expect(puts).toHaveLength(1);
    expect((puts[0]?.body as { scenario: unknown } | undefined)?.scenario).toEqual({
      ...scenario,
      tiers: ["GLACIER@bulk"],
      lifecycle: null,
      hybrid: [],
    });
  });

  it("says a saved plan is replaced, and shows the API's refusals", async () => {
    let answer: { status: number; body: unknown } = {
      status: 404,
      body: { detail: "no bucket named 'belle2'", BucketName: "belle2" },
    };
    installFakeApi({
      "GET /api/buckets": () => ({ body: [bucket("belle2")] }),
      "POST /api/pricing/plan-usage": () => ({ body: usage }),
      "GET /api/spend/plans/belle2": () => ({ body: savedPlan("belle2", { ...usage, reads_gib: 5 }) }),
      "PUT /api/spend/plans/belle2": () => answer,
    });
    renderDialog();
    await userEvent.selectOptions(await screen.findByLabelText("Bucket"), "belle2");
    expect(
      await screen.findByText(/belle2 has a plan already \(5 GiB read, .*saving replaces it\./),
    ).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Save plan" }));
    expect(await screen.findByText("The plan was not saved")).toBeInTheDocument();
    expect(screen.getByText(/no bucket named 'belle2'/)).toBeInTheDocument();
    // a 422 naming a field shows on that field
    answer = {
      status: 422,
      body: {
        detail: "body.reads_gib: too large",
        errors: [{ loc: ["body", "reads_gib"], msg: "too large" }],
      },
    };
    await userEvent.click(screen.getByRole("button", { name: "Save plan" }));
    expect(await screen.findByText("too large")).toBeInTheDocument();
    expect(screen.queryByText("The plan was not saved")).not.toBeInTheDocument();
    expect(screen.queryByRole("status")).not.toBeInTheDocument();
  });

  it("sends a user without buckets to the Browser instead of offering a save", async () => {
    installFakeApi({
      "GET /api/buckets": () => ({ body: [] }),
      "POST /api/pricing/plan-usage": () => ({ body: usage }),
    });
    renderDialog();
    expect(await screen.findByText(/you have none yet/)).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Browser" })).toHaveAttribute("href", "/browser");
    expect(screen.getByRole("button", { name: "Save plan" })).toBeDisabled();
  });
});
