import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { NotificationsCard } from "./NotificationsCard";

vi.mock("@tanstack/react-router", () => ({ Link: () => null }));

afterEach(() => vi.unstubAllGlobals());

function renderCard() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <NotificationsCard />
    </QueryClientProvider>,
  );
}

describe("NotificationsCard webhook", () => {
  it("shows the signing secret of a first URL once, then rotates it after confirmation", async () => {
    let hook: { url: string | null; has_secret: boolean; secret: string | null } = {
      url: null,
      has_secret: false,
      secret: null,
    };
    const { requests } = installFakeApi({
      "GET /api/notifications": () => ({ body: { items: [], unread: 0 } }),
      "GET /api/notifications/webhook": () => ({ body: hook }),
      "PUT /api/notifications/webhook": () => {
        hook = { url: "https://example.org/hook", has_secret: true, secret: null };
        return { body: { ...hook, secret: "whsec_first" } };
      },
      "POST /api/notifications/webhook/secret/rotate": () => ({ body: { ...hook, secret: "whsec_second" } }),
    });
    renderCard();
    expect(screen.queryByRole("button", { name: "Rotate secret" })).not.toBeInTheDocument();
    await userEvent.type(await screen.findByLabelText("Webhook URL"), "https://example.org/hook");
    await userEvent.click(screen.getByRole("button", { name: "Save" }));

    const first = await screen.findByRole("dialog", { name: "Webhook signing secret" });
    expect(within(first).getAllByText("whsec_first").length).toBeGreaterThan(0);
    await userEvent.click(within(first).getByRole("button", { name: "I have stored the secret" }));
    expect(document.body.innerHTML).not.toContain("whsec_first");

    await userEvent.click(await screen.findByRole("button", { name: "Rotate secret" }));
    const confirm = screen.getByRole("alertdialog", { name: "Rotate the signing secret?" });
    await userEvent.click(within(confirm).getByRole("button", { name: "Rotate secret" }));
    const second = await screen.findByRole("dialog", { name: "Signing secret rotated" });
    expect(within(second).getAllByText("whsec_second").length).toBeGreaterThan(0);
    await userEvent.click(within(second).getByRole("button", { name: "I have stored the secret" }));
    expect(document.body.innerHTML).not.toContain("whsec_second");
    expect(requests.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`)).toEqual([
      "PUT /api/notifications/webhook",
      "POST /api/notifications/webhook/secret/rotate",
    ]);
  });
});
