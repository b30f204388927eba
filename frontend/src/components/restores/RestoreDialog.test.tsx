import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { RestoreDialog } from "./RestoreDialog";

afterEach(() => vi.unstubAllGlobals());

const option = (speed: string, seconds: number, total: string, available = true) => ({
  speed,
  available,
  expected_ready_s: seconds,
  expected_ready_at: "2026-11-22T10:05:00Z",
  cost_usd: { restore: total, retrieval: "0.000000", restored_copy: "0.000001", total },
  notes: available ? [] : ["archive offers no expedited restores"],
});

const preview = {
  bucket: "telescope-archive",
  objects: 3,
  bytes: 3 * 262144,
  already_restored: 1,
  not_archived: 2,
  missing_keys: [],
  days: 7,
  tiers: [{ tier: "archive", offline: true, objects: 3, bytes: 786432 }],
  speeds: [
    option("expedited", 5, "0.030023", false),
    option("standard", 30, "0.000159"),
    option("bulk", 60, "0"),
  ],
  sample_keys: ["survey/a", "survey/b", "survey/c"],
};

function renderDialog(onCreated = vi.fn()) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <RestoreDialog
        open
        onClose={() => {}}
        selection={{ bucket: "telescope-archive", keys: ["survey/a"], prefixes: ["survey/"] }}
        onCreated={onCreated}
      />
    </QueryClientProvider>,
  );
  return onCreated;
}

describe("RestoreDialog", () => {
  it("previews time and cost per speed and submits the chosen one", async () => {
    const { requests } = installFakeApi({
      "POST /api/restores/preview": () => ({ body: preview }),
      "POST /api/restores/batches": (req) => ({ status: 201, body: { id: 42, ...(req.body as object) } }),
    });
    const onCreated = renderDialog();
    const dialog = await screen.findByRole("dialog", { name: "Restore archived objects" });
    expect(await within(dialog).findByTestId("restore-preview-summary")).toHaveTextContent(
      "3 archived objects, 768 KiB (1 readable now: their copies are extended); 2 selected objects need no restore.",
    );
    expect(within(dialog).getByTestId("restore-cost-standard")).toHaveTextContent("$0.00016");
    expect(within(dialog).getByTestId("restore-cost-bulk")).toHaveTextContent("$0.00");
    expect(within(dialog).getByRole("radio", { name: /expedited/ })).toBeDisabled();
    expect(within(dialog).getByText(/archive offers no expedited restores/)).toBeInTheDocument();

    await userEvent.click(within(dialog).getByRole("radio", { name: /bulk/ }));
    await userEvent.clear(within(dialog).getByLabelText("Keep readable for (days)"));
    await userEvent.type(within(dialog).getByLabelText("Keep readable for (days)"), "3");
    await userEvent.click(within(dialog).getByRole("button", { name: "Restore 3 objects" }));

    const created = requests.find((r) => r.method === "POST" && r.path === "/api/restores/batches");
    expect(created?.body).toEqual({
      bucket: "telescope-archive",
      keys: ["survey/a"],
      prefixes: ["survey/"],
      speed: "bulk",
      days: 3,
      name: null,
    });
    await vi.waitFor(() => expect(onCreated).toHaveBeenCalledWith(expect.objectContaining({ id: 42 })));
  });

  it("shows the server's message when the batch is refused and keeps the dialog open", async () => {
    installFakeApi({
      "POST /api/restores/preview": () => ({ body: preview }),
      "POST /api/restores/batches": () => ({
        status: 422,
        body: { detail: "nothing to restore: no archived objects" },
      }),
    });
    const onCreated = renderDialog();
    const dialog = await screen.findByRole("dialog", { name: "Restore archived objects" });
    await userEvent.click(await within(dialog).findByRole("button", { name: "Restore 3 objects" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent(
      "nothing to restore: no archived objects",
    );
    expect(onCreated).not.toHaveBeenCalled();
  });
});
