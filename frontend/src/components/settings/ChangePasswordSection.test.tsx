import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { configure, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { ChangePasswordSection } from "./ChangePasswordSection";

afterEach(() => vi.unstubAllGlobals());
// the machine is shared and loaded: a first render may take longer than the default second
configure({ asyncUtilTimeout: 5000 });

function renderSection() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <ChangePasswordSection />
    </QueryClientProvider>,
  );
}

function changed(revoked: number, kept: number) {
  return {
    sessions_ended: 1,
    tokens_revoked: revoked,
    s3_keys_revoked: revoked ? 1 : 0,
    tokens_kept: kept,
    s3_keys_kept: kept ? 1 : 0,
  };
}

async function fill(current: string, next: string, repeat: string) {
  await userEvent.type(screen.getByLabelText("Current password"), current);
  await userEvent.type(screen.getByLabelText("New password"), next);
  await userEvent.type(screen.getByLabelText("Repeat new password"), repeat);
  await userEvent.click(screen.getByRole("button", { name: "Change password" }));
}

describe("ChangePasswordSection", () => {
  it("sends nothing while the new passwords differ or are short", async () => {
    const { requests } = installFakeApi({});
    renderSection();
    await fill("old-password", "new-password-1", "new-password-2");
    expect(screen.getByText("The two new passwords differ.")).toBeInTheDocument();
    await userEvent.clear(screen.getByLabelText("New password"));
    await userEvent.type(screen.getByLabelText("New password"), "short");
    const errors = screen.getAllByRole("alert").map((el) => el.textContent);
    expect(errors).toContain("At least 8 characters.");
    expect(requests).toHaveLength(0);
  });

  it("shows the server's refusal of a wrong current password", async () => {
    installFakeApi({
      "POST /api/auth/password": () => ({
        status: 403,
        body: { detail: "current password is wrong", field: "current_password" },
      }),
    });
    renderSection();
    await fill("not-it", "new-password-1", "new-password-1");
    expect(await screen.findByRole("alert")).toHaveTextContent("current password is wrong");
  });

  it("changes the password and clears the form", async () => {
    const { requests } = installFakeApi({
      "POST /api/auth/password": () => ({ status: 200, body: changed(0, 2) }),
    });
    renderSection();
    await fill("old-password", "new-password-1", "new-password-1");
    expect(await screen.findByRole("status")).toHaveTextContent("Password changed");
    expect(screen.getByRole("status")).toHaveTextContent("2 API token(s) and 1 S3 key(s) keep working");
    expect(requests.map((r) => r.body)).toEqual([
      {
        current_password: "old-password",
        new_password: "new-password-1",
        revoke_tokens: false,
        revoke_s3_keys: false,
      },
    ]);
    expect(screen.getByLabelText("Current password")).toHaveValue("");
  });

  it("revokes tokens and S3 keys in the same step when asked", async () => {
    const { requests } = installFakeApi({
      "POST /api/auth/password": () => ({ status: 200, body: changed(2, 0) }),
    });
    renderSection();
    await userEvent.click(screen.getByLabelText("Also revoke my API tokens and S3 keys"));
    await fill("old-password", "new-password-1", "new-password-1");
    expect(await screen.findByRole("status")).toHaveTextContent("Revoked 2 API token(s) and 1 S3 key(s)");
    expect(requests.map((r) => r.body)).toEqual([
      {
        current_password: "old-password",
        new_password: "new-password-1",
        revoke_tokens: true,
        revoke_s3_keys: true,
      },
    ]);
  });
});
