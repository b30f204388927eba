import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { PlanFormDialog } from "./PlanFormDialog";
import { planSummary, validatePlanForm } from "./plan-form";

afterEach(() => vi.unstubAllGlobals());

const saved = {
  reads_gib: 50,
  read_requests: 2000000,
  write_requests: 1000,
  restores_gib: 40,
  restore_speed: "bulk" as const,
};

function renderDialog(plan: typeof saved | null = null) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const onClose = vi.fn();
  render(
    <QueryClientProvider client={client}>
      <PlanFormDialog bucket="belle2" plan={plan} onClose={onClose} />
    </QueryClientProvider>,
  );
  return { onClose, dialog: screen.getByRole("dialog", { name: "Plan for belle2" }) };
}

async function retype(field: HTMLElement, text: string) {
  await userEvent.clear(field);
  await userEvent.type(field, text);
}

describe("validatePlanForm", () => {
  it("wants numbers, not negative, whole where they are request counts", () => {
    const ok = { reads_gib: "1.5", read_requests: "10", write_requests: "0", restores_gib: "0" };
    expect(validatePlanForm({ ...ok, restore_speed: "standard" })).toEqual({});
    expect(validatePlanForm({ ...ok, read_requests: "1.5", restore_speed: "standard" })).toEqual({
      read_requests: "Must be a whole number of requests.",
    });
    expect(validatePlanForm({ ...ok, reads_gib: "-1", restores_gib: "", restore_speed: "bulk" })).toEqual({
      reads_gib: "Must not be negative.",
      restores_gib: "Give a number (0 for none).",
    });
  });

  it("summarises a plan, or says there is none", () => {
    expect(planSummary(null, 0.45)).toBe("storage $0.45; no usage planned: storage only");
    expect(planSummary(saved, 0.45)).toBe(
      "storage $0.45 + 50 GiB read, 2,000,000 GET, 1,000 PUT, 40 GiB restored (bulk)",
    );
  });
});

describe("PlanFormDialog", () => {
  it("saves the plan as typed and closes", async () => {
    const { requests } = installFakeApi({
      "PUT /api/spend/plans/belle2": (req) => ({
        body: {
          ...(req.body as object),
          bucket: "belle2",
          updated_at: "2026-11-28T00:00:00Z",
          updated_by: "u",
        },
      }),
    });
    const { onClose, dialog } = renderDialog();
    await retype(within(dialog).getByLabelText("Restores (GiB / month)"), "40");
    await userEvent.selectOptions(within(dialog).getByLabelText("Restore speed"), "bulk");
    await userEvent.click(within(dialog).getByRole("button", { name: "Save plan" }));
    await vi.waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(requests.at(-1)?.body).toEqual({
      reads_gib: 0,
      read_requests: 0,
      write_requests: 0,
      restores_gib: 40,
      restore_speed: "bulk",
    });
  });

  it("refuses a fractional request count before sending", async () => {
    const { requests } = installFakeApi({});
    const { dialog } = renderDialog(saved);
    const field = within(dialog).getByLabelText("GET-class requests / month");
    expect(field).toHaveValue(2000000);
    await retype(field, "1.5");
    await userEvent.click(within(dialog).getByRole("button", { name: "Save plan" }));
    expect(within(dialog).getByText("Must be a whole number of requests.")).toBeInTheDocument();
    expect(field).toHaveAttribute("aria-invalid", "true");
    expect(requests).toHaveLength(0);
  });

  it("shows the server's 422 at the field it names, and stays open", async () => {
    installFakeApi({
      "PUT /api/spend/plans/belle2": () => ({
        status: 422,
        body: {
          detail: "reads_gib: Input should be less than or equal to 1000000000000",
          errors: [
            { loc: ["body", "reads_gib"], msg: "Input should be less than or equal to 1000000000000" },
          ],
        },
      }),
    });
    const { onClose, dialog } = renderDialog();
    const reads = within(dialog).getByLabelText("Reads (GiB / month)");
    await retype(reads, "10000000000000");
    await userEvent.click(within(dialog).getByRole("button", { name: "Save plan" }));
    expect(
      await within(dialog).findByText("Input should be less than or equal to 1000000000000"),
    ).toBeInTheDocument();
    expect(reads).toHaveAttribute("aria-invalid", "true");
    expect(within(dialog).getByLabelText("Restores (GiB / month)")).not.toHaveAttribute("aria-invalid");
    expect(onClose).not.toHaveBeenCalled();
    // typing in the field clears its complaint
    await userEvent.type(reads, "0");
    expect(reads).not.toHaveAttribute("aria-invalid");
  });

  it("removes a saved plan", async () => {
    const { requests } = installFakeApi({ "DELETE /api/spend/plans/belle2": () => ({ status: 204 }) });
    const { onClose, dialog } = renderDialog(saved);
    await userEvent.click(within(dialog).getByRole("button", { name: "Remove plan" }));
    await vi.waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(["DELETE /api/spend/plans/belle2"]);
  });
});
