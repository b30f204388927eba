import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CatalogSummary, InstallationTier } from "@/api/pricing";
import { installFakeApi } from "@/test/fake-api";
import { TierPicker } from "./TierPicker";

afterEach(() => vi.unstubAllGlobals());

const summary: CatalogSummary = {
  id: "aws-us-east-1-2026",
  provider: "aws",
  region: "us-east-1",
  currency: "USD",
  valid_from: "2026-01-01",
  source: [],
  classes: ["STANDARD"],
  has_estimates: false,
  origin: "shipped",
};
const catalog = {
  ...summary,
  estimated: [],
  notes: "",
  egress: {},
  classes: [
    { id: "STANDARD", name: "S3 Standard", storage: [{ up_to_gib: null, price: 0.023 }], restore: {} },
  ],
};
const mine: InstallationTier[] = [
  {
    id: 1,
    name: "hot-disk",
    ref: "tier:hot-disk",
    priceable: true,
    catalog: "aws-us-east-1-2026",
    storage_class: "STANDARD",
    class_name: "S3 Standard",
    offline: false,
    reason: null,
    driver: "posix",
    warning:
      "hot-disk is an on-premises (posix) tier priced as a cloud class (STANDARD of aws-us-east-1-2026)",
  },
  {
    id: 2,
    name: "archive",
    ref: "tier:archive",
    priceable: true,
    catalog: "aws-us-east-1-2026",
    storage_class: "GLACIER",
    class_name: "S3 Glacier Flexible Retrieval",
    offline: true,
    reason: null,
    driver: "posix",
  },
  {
    id: 3,
    name: "scratch",
    ref: "tier:scratch",
    priceable: false,
    catalog: null,
    storage_class: null,
    class_name: null,
    offline: false,
    reason: "tier 'scratch' has no price_ref: an admin sets its price catalog and class",
    driver: "posix",
  },
];

function renderPicker(selected: string[], onChange: (tiers: string[]) => void) {
  installFakeApi({
    "GET /api/pricing/catalogs/aws-us-east-1-2026": () => ({ body: catalog }),
    "GET /api/pricing/installation-tiers": () => ({ body: mine }),
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <TierPicker catalogs={[summary]} primary={summary.id} selected={selected} onChange={onChange} />
    </QueryClientProvider>,
  );
}

describe("TierPicker", () => {
  it("offers the installation's tiers with the class behind each and says why one cannot be priced", async () => {
    const onChange = vi.fn();
    renderPicker(["STANDARD"], onChange);
    const list = await screen.findByRole("list", { name: "Your tiers" });
    expect(list).toHaveTextContent("hot-disk");
    expect(list).toHaveTextContent("priced as aws-us-east-1-2026:STANDARD — S3 Standard");
    expect(list).toHaveTextContent("not priceable: tier 'scratch' has no price_ref");
    expect(screen.getByLabelText("tier:scratch")).toBeDisabled();
    // an on-premises tier priced as a cloud class is flagged, the others are not
    const [note] = screen.getAllByRole("note");
    expect(screen.getAllByRole("note")).toHaveLength(1);
    expect(note).toHaveTextContent("hot-disk is an on-premises (posix) tier priced as a cloud class");

    await userEvent.click(screen.getByLabelText("tier:hot-disk"));
    expect(onChange).toHaveBeenLastCalledWith(["STANDARD", "tier:hot-disk"]);
  });

  it("adds every priceable tier of the installation at once", async () => {
    const onChange = vi.fn();
    renderPicker(["STANDARD", "tier:archive@bulk"], onChange);
    await userEvent.click(await screen.findByRole("button", { name: "Compare all my tiers" }));
    expect(onChange).toHaveBeenLastCalledWith(["STANDARD", "tier:archive@bulk", "tier:hot-disk"]);
  });
});
