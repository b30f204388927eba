import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { formatDateTime } from "@/lib/format";
import { installFakeApi } from "@/test/fake-api";
import { AccessKeysSection } from "./AccessKeysSection";

afterEach(() => vi.unstubAllGlobals());

function renderSection() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <AccessKeysSection />
    </QueryClientProvider>,
  );
}

const overview = {
  tiers: [],
  buckets: [],
  totals: { buckets: 0, objects: 0, bytes: 0 },
  gateway_url: "http://gw:9000",
};

describe("AccessKeysSection", () => {
  it("rotates a key after confirmation and shows the new secret only until closed", async () => {
    let keys = [{ access_key_id: "TPOLD", active: true, created_at: "2026-11-22T10:00:00Z" }];
    const { requests } = installFakeApi({
      "GET /api/keys": () => ({ body: keys }),
      "GET /api/overview": () => ({ body: overview }),
      "POST /api/keys/TPOLD/rotate": () => {
        keys = [{ access_key_id: "TPNEW", active: true, created_at: "2026-11-22T11:00:00Z" }];
        return {
          body: { access_key_id: "TPNEW", secret_access_key: "s3cr3t-value", gateway_url: "http://gw:9000" },
        };
      },
    });
    renderSection();
    await userEvent.click(await screen.findByRole("button", { name: "Rotate TPOLD" }));
    const confirm = screen.getByRole("alertdialog", { name: "Rotate this key?" });
    await userEvent.click(within(confirm).getByRole("button", { name: "Rotate key" }));

    const shown = await screen.findByRole("dialog", { name: "Access key rotated" });
    expect(within(shown).getAllByText("s3cr3t-value").length).toBeGreaterThan(0);
    expect(within(shown).getAllByText("http://gw:9000").length).toBeGreaterThan(0);
    expect(await screen.findByRole("cell", { name: "TPNEW" })).toBeInTheDocument();

    await userEvent.click(within(shown).getByRole("button", { name: "I have stored the secret" }));
    expect(screen.queryByText("s3cr3t-value")).not.toBeInTheDocument();
    expect(document.body.innerHTML).not.toContain("s3cr3t-value");
    expect(requests.filter((r) => r.method === "POST").map((r) => r.path)).toEqual([
      "/api/keys/TPOLD/rotate",
    ]);
  });

  it("does not delete when the confirmation is cancelled", async () => {
    const { requests } = installFakeApi({
      "GET /api/keys": () => ({
        body: [{ access_key_id: "TPK", active: true, created_at: "2026-11-22T10:00:00Z" }],
      }),
      "GET /api/overview": () => ({ body: overview }),
    });
    renderSection();
    await userEvent.click(await screen.findByRole("button", { name: "Delete TPK" }));
    await userEvent.click(screen.getByRole("button", { name: "Cancel" }));
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
    expect(requests.some((r) => r.method === "DELETE")).toBe(false);
  });

  it("mints a key with the chosen lifetime and lists when it expires", async () => {
    let keys: Array<Record<string, unknown>> = [];
    const expiresAt = "2099-01-02T03:04:00Z";
    const { requests } = installFakeApi({
      "GET /api/keys": () => ({ body: keys }),
      "GET /api/overview": () => ({ body: overview }),
      "POST /api/keys": () => {
        keys = [
          { access_key_id: "TPTMP", active: true, created_at: "2098-12-26T03:04:00Z", expires_at: expiresAt },
        ];
        return {
          body: {
            access_key_id: "TPTMP",
            secret_access_key: "tmp-secret",
            gateway_url: "http://gw:9000",
            expires_at: expiresAt,
          },
        };
      },
    });
    renderSection();
    await userEvent.selectOptions(screen.getByLabelText("Lifetime"), "7 days");
    await userEvent.click(screen.getByRole("button", { name: "Create key" }));

    const shown = await screen.findByRole("dialog", { name: "New temporary access key" });
    expect(within(shown).getByText(/This key expires at/)).toBeInTheDocument();
    expect(requests.find((r) => r.method === "POST")?.body).toEqual({ expires_in: 7 * 24 * 3600 });
    await userEvent.click(within(shown).getByRole("button", { name: "I have stored the secret" }));
    const row = (await screen.findByRole("cell", { name: "TPTMP" })).closest("tr") as HTMLElement;
    expect(within(row).getByRole("cell", { name: formatDateTime(expiresAt) })).toBeInTheDocument();
  });

  it("marks a key past its expiry as expired and a permanent one as never expiring", async () => {
    installFakeApi({
      "GET /api/keys": () => ({
        body: [
          {
            access_key_id: "TPOLD",
            active: true,
            created_at: "2026-01-01T00:00:00Z",
            expires_at: "2026-01-01T01:00:00Z",
          },
          { access_key_id: "TPKEEP", active: true, created_at: "2026-01-01T00:00:00Z", expires_at: null },
        ],
      }),
      "GET /api/overview": () => ({ body: overview }),
    });
    renderSection();
    const old = (await screen.findByRole("cell", { name: "TPOLD" })).closest("tr") as HTMLElement;
    expect(within(old).getByText("expired")).toBeInTheDocument();
    const keep = screen.getByRole("cell", { name: "TPKEEP" }).closest("tr") as HTMLElement;
    expect(within(keep).getByText("never")).toBeInTheDocument();
    expect(within(keep).getByText("active")).toBeInTheDocument();
  });

  it("mints a permanent key without a body, as before", async () => {
    const { requests } = installFakeApi({
      "GET /api/keys": () => ({ body: [] }),
      "GET /api/overview": () => ({ body: overview }),
      "POST /api/keys": () => ({
        body: {
          access_key_id: "TPP",
          secret_access_key: "s",
          gateway_url: "http://gw:9000",
          expires_at: null,
        },
      }),
    });
    renderSection();
    await userEvent.click(await screen.findByRole("button", { name: "Create key" }));
    expect(await screen.findByRole("dialog", { name: "New access key" })).toBeInTheDocument();
    expect(requests.find((r) => r.method === "POST")?.body).toBeUndefined();
  });

  it("shows the server's message when a key cannot be created", async () => {
    installFakeApi({
      "GET /api/keys": () => ({ body: [] }),
      "GET /api/overview": () => ({ body: overview }),
      "POST /api/keys": () => ({ status: 409, body: { detail: "at most 5 keys per user" } }),
    });
    renderSection();
    expect(await screen.findByRole("heading", { name: "No access keys" })).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Create key" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("at most 5 keys per user");
  });
});
