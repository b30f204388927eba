import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { configure, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { UsersSection } from "./UsersSection";

afterEach(() => vi.unstubAllGlobals());
// the machine is shared and loaded: a first render may take longer than the default second
configure({ asyncUtilTimeout: 5000 });

function renderSection() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <UsersSection currentUserId={1} />
    </QueryClientProvider>,
  );
}

const base = {
  created_at: "2026-11-01T10:00:00Z",
  disabled_at: null as string | null,
  last_login_at: null as string | null,
};
const admin = { ...base, id: 1, username: "root", is_admin: true, role: "admin", disabled: false };
const ada = {
  ...base,
  id: 2,
  username: "ada",
  is_admin: false,
  role: "member",
  disabled: false,
  last_login_at: "2026-11-24T08:00:00Z",
};

function rowOf(name: string): HTMLElement {
  return screen.getByText(name, { selector: "strong" }).closest("tr") as HTMLElement;
}

describe("UsersSection", () => {
  it("disables a user after confirmation and enables them again without one", async () => {
    let users = [admin, ada];
    const { requests } = installFakeApi({
      "GET /api/users": () => ({ body: users }),
      "PATCH /api/users/2": (req) => {
        const disabled = (req.body as { disabled: boolean }).disabled;
        users = [admin, { ...ada, disabled, disabled_at: disabled ? "2026-11-24T12:00:00Z" : null }];
        return { body: users[1] };
      },
    });
    renderSection();
    await screen.findByText("ada", { selector: "strong" });
    expect(within(rowOf("root")).queryByRole("button")).not.toBeInTheDocument(); // not yourself
    expect(within(rowOf("ada")).getByText("active")).toBeInTheDocument();

    await userEvent.click(screen.getByRole("button", { name: "Disable ada" }));
    const confirm = screen.getByRole("alertdialog", { name: "Disable ada?" });
    expect(confirm).toHaveTextContent("signed out at once");
    await userEvent.click(within(confirm).getByRole("button", { name: "Disable user" }));
    expect(await within(rowOf("ada")).findByText("disabled")).toBeInTheDocument();

    await userEvent.click(screen.getByRole("button", { name: "Enable ada" }));
    expect(await within(rowOf("ada")).findByText("active")).toBeInTheDocument();
    expect(requests.filter((r) => r.method === "PATCH").map((r) => r.body)).toEqual([
      { disabled: true },
      { disabled: false },
    ]);
  });

  it("says clearly that a user who owns buckets cannot be deleted", async () => {
    const { requests } = installFakeApi({
      "GET /api/users": () => ({ body: [admin, ada] }),
      "DELETE /api/users/2": () => ({
        status: 409,
        body: { detail: "ada still owns genomes: delete those first, or disable the user instead" },
      }),
    });
    renderSection();
    await userEvent.click(await screen.findByRole("button", { name: "Delete ada" }));
    const dialog = screen.getByRole("alertdialog", { name: "Delete ada?" });
    expect(dialog).toHaveTextContent("Buckets are never deleted or handed to someone else");
    await userEvent.click(within(dialog).getByRole("button", { name: "Delete user" }));
    const alert = await within(dialog).findByRole("alert");
    expect(alert).toHaveTextContent("ada still owns buckets");
    expect(alert).toHaveTextContent("ada still owns genomes");
    expect(within(dialog).getByRole("button", { name: "Delete user" })).toBeDisabled();
    expect(requests.filter((r) => r.method === "DELETE")).toHaveLength(1);
  });

  it("resets a password to a generated one the admin sees once", async () => {
    const { requests } = installFakeApi({
      "GET /api/users": () => ({ body: [admin, ada] }),
      "POST /api/users/2/password": () => ({ status: 204 }),
    });
    renderSection();
    await userEvent.click(await screen.findByRole("button", { name: "Reset password of ada" }));
    const dialog = screen.getByRole("dialog", { name: "Reset the password of ada" });
    const suggested = (within(dialog).getByLabelText("New password") as HTMLInputElement).value;
    expect(suggested).toMatch(/^[A-Za-z2-9]{16}$/);
    await userEvent.click(within(dialog).getByRole("button", { name: "Set password" }));
    expect(await within(dialog).findByRole("status")).toHaveTextContent("The password of ada is set.");
    expect(within(dialog).getAllByText(suggested).length).toBeGreaterThan(0);
    expect(requests.find((r) => r.method === "POST")?.body).toEqual({ new_password: suggested });
    await userEvent.click(within(dialog).getByRole("button", { name: "Done" }));
    expect(document.body.innerHTML).not.toContain(suggested);
  });

  it("changes a member's role after confirmation and shows the last sign-in", async () => {
    const { requests } = installFakeApi({
      "GET /api/users": () => ({ body: [admin, ada] }),
      "PATCH /api/users/2": () => ({ body: { ...ada, is_admin: true, role: "admin" } }),
    });
    renderSection();
    await screen.findByText("ada", { selector: "strong" });
    expect(within(rowOf("root")).getByText("—")).toBeInTheDocument(); // never signed in
    await userEvent.click(screen.getByRole("button", { name: "Change role of ada" }));
    const confirm = screen.getByRole("alertdialog", { name: "Make ada an admin?" });
    await userEvent.click(within(confirm).getByRole("button", { name: "Make admin" }));
    expect(requests.find((r) => r.method === "PATCH")?.body).toEqual({ role: "admin" });
  });
});
