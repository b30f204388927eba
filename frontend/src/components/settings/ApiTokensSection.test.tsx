import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { configure, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { ApiTokensSection } from "./ApiTokensSection";

afterEach(() => vi.unstubAllGlobals());
// the machine is shared and loaded: a first render may take longer than the default second
configure({ asyncUtilTimeout: 5000 });

function renderSection() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <ApiTokensSection />
    </QueryClientProvider>,
  );
}

const ciToken = {
  id: 7,
  name: "ci",
  created_at: "2026-11-20T10:00:00Z",
  expires_at: "2027-02-18T10:00:00Z",
  last_used_at: null,
};

describe("ApiTokensSection", () => {
  it("creates a named token with an expiry and shows its secret only until closed", async () => {
    let tokens: unknown[] = [];
    const { requests } = installFakeApi({
      "GET /api/auth/tokens": () => ({ body: tokens }),
      "POST /api/auth/tokens": (req) => {
        const body = req.body as { name: string; expires_in_days: number };
        const row = { ...ciToken, id: 8, name: body.name };
        tokens = [row];
        return { status: 201, body: { ...row, token: "tp_secret-token-value" } };
      },
    });
    renderSection();
    expect(await screen.findByRole("heading", { name: "No API tokens" })).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Create token" }));
    const form = screen.getByRole("dialog", { name: "Create API token" });
    await userEvent.click(within(form).getByRole("button", { name: "Create token" }));
    expect(within(form).getByText(/Name the token/)).toBeInTheDocument();
    expect(requests.some((r) => r.method === "POST")).toBe(false);

    await userEvent.type(within(form).getByLabelText("Name"), "nightly backup");
    await userEvent.selectOptions(within(form).getByLabelText("Expires after"), "30");
    await userEvent.click(within(form).getByRole("button", { name: "Create token" }));

    const shown = await screen.findByRole("dialog", { name: "API token “nightly backup”" });
    expect(within(shown).getAllByText(/tp_secret-token-value/).length).toBeGreaterThan(0);
    expect(requests.find((r) => r.method === "POST")?.body).toEqual({
      name: "nightly backup",
      expires_in_days: 30,
    });
    expect(await screen.findByRole("cell", { name: "nightly backup" })).toBeInTheDocument();
    await userEvent.click(within(shown).getByRole("button", { name: "I have stored the token" }));
    expect(document.body.innerHTML).not.toContain("tp_secret-token-value");
  });

  it("revokes a token only after confirmation and lists last use and expiry", async () => {
    let tokens = [{ ...ciToken, last_used_at: "2026-11-24T09:30:00Z" }];
    const { requests } = installFakeApi({
      "GET /api/auth/tokens": () => ({ body: tokens }),
      "DELETE /api/auth/tokens/7": () => {
        tokens = [];
        return { status: 204 };
      },
    });
    renderSection();
    const row = (await screen.findByRole("cell", { name: "ci" })).closest("tr") as HTMLElement;
    expect(within(row).queryByText("never")).not.toBeInTheDocument();
    await userEvent.click(within(row).getByRole("button", { name: "Revoke ci" }));
    const confirm = screen.getByRole("alertdialog", { name: "Revoke this token?" });
    expect(requests.some((r) => r.method === "DELETE")).toBe(false);
    await userEvent.click(within(confirm).getByRole("button", { name: "Revoke token" }));
    expect(await screen.findByRole("heading", { name: "No API tokens" })).toBeInTheDocument();
    expect(requests.filter((r) => r.method === "DELETE").map((r) => r.path)).toEqual(["/api/auth/tokens/7"]);
  });

  it("marks expired tokens", async () => {
    installFakeApi({
      "GET /api/auth/tokens": () => ({ body: [{ ...ciToken, expires_at: "2020-01-01T00:00:00Z" }] }),
    });
    renderSection();
    const row = (await screen.findByRole("cell", { name: "ci" })).closest("tr") as HTMLElement;
    expect(within(row).getByText("expired")).toBeInTheDocument();
    expect(within(row).getByText("never")).toBeInTheDocument();
  });
});
