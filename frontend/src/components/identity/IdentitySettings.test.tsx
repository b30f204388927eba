import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { IdentityStatus } from "@/api/identity";
import { installFakeApi } from "@/test/fake-api";
import { parseGroups, projectsGiven } from "./DryRunCard";
import { IdentitySettings } from "./IdentitySettings";

afterEach(() => vi.unstubAllGlobals());

function renderSettings() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <IdentitySettings />
    </QueryClientProvider>,
  );
}

const status: IdentityStatus = {
  oidc_configured: true,
  oidc_issuer: "https://idp.example.org",
  oidc_error: null,
  ldap_configured: false,
  ldap_url: "",
  local_passwords: false,
  break_glass_admins: ["root"],
  mapping: [
    { group: "lab-a", project: "lab-a", role: "member", status: "mapped" },
    { group: "ghost", project: "no-such-project", role: "member", status: "no-project" },
  ],
  last_sign_ins: [{ at: "2026-12-05T10:00:00Z", username: "alice", via: "oidc" }],
};

describe("IdentitySettings", () => {
  it("shows the provider, the mapping and the latest sign-ins", async () => {
    installFakeApi({ "GET /api/identity": () => ({ body: status }) });
    renderSettings();
    const providers = await screen.findByRole("region", { name: "Sign-in providers" });
    expect(await within(providers).findByText("https://idp.example.org")).toBeInTheDocument();
    expect(within(providers).getByText("ready")).toBeInTheDocument();
    expect(within(providers).getByText(/break-glass admins root/)).toBeInTheDocument();

    const mapping = screen.getByRole("region", { name: "Groups → projects" });
    expect(within(mapping).getByRole("cell", { name: "no-such-project" })).toBeInTheDocument();
    expect(within(mapping).getByText("no such project")).toBeInTheDocument();

    const signIns = screen.getByRole("region", { name: "Latest sign-ins" });
    expect(within(signIns).getByRole("cell", { name: "alice" })).toBeInTheDocument();
    expect(within(signIns).getByRole("cell", { name: "OpenID Connect" })).toBeInTheDocument();
  });

  it("says why the provider cannot be reached", async () => {
    installFakeApi({
      "GET /api/identity": () => ({
        body: { ...status, oidc_issuer: null, oidc_error: "discovery document: connection refused" },
      }),
    });
    renderSettings();
    expect(await screen.findByText("discovery document: connection refused")).toBeInTheDocument();
    expect(screen.getByText("unreachable")).toBeInTheDocument();
  });

  it("dry-runs the groups typed in and says what they would give", async () => {
    const { requests } = installFakeApi({
      "GET /api/identity": () => ({ body: status }),
      "POST /api/identity/dry-run": () => ({
        body: [
          { group: "lab-a", project: "lab-a", role: "member", status: "mapped" },
          { group: "admins-a", project: "lab-a", role: "manager", status: "mapped" },
          { group: "other", project: null, role: null, status: "unmapped" },
        ],
      }),
    });
    renderSettings();
    const card = screen.getByRole("region", { name: "Dry run" });
    await userEvent.type(within(card).getByLabelText("Groups"), "lab-a, admins-a{Enter}other{Enter}lab-a");
    await userEvent.click(within(card).getByRole("button", { name: "Try these groups" }));

    expect(await within(card).findByRole("status")).toHaveTextContent("These groups give lab-a as manager.");
    expect(within(card).getByText("no entry")).toBeInTheDocument();
    const posted = requests.filter((r) => r.method === "POST");
    expect(posted.map((r) => r.body)).toEqual([{ groups: ["lab-a", "admins-a", "other"] }]);
  });

  it("asks for a group before a dry run", async () => {
    const { requests } = installFakeApi({ "GET /api/identity": () => ({ body: status }) });
    renderSettings();
    await userEvent.click(screen.getByRole("button", { name: "Try these groups" }));
    expect(await screen.findByText("Enter at least one group.")).toBeInTheDocument();
    expect(requests.some((r) => r.method === "POST")).toBe(false);
  });
});

describe("dry-run helpers", () => {
  it("parses groups from lines and commas, dropping blanks and repeats", () => {
    expect(parseGroups(" a ,b\n\n a,\tc ")).toEqual(["a", "b", "c"]);
  });

  it("gives each project the strongest role and ignores what gives nothing", () => {
    expect(
      projectsGiven([
        { group: "x", project: "p", role: "manager", status: "mapped" },
        { group: "y", project: "p", role: "viewer", status: "mapped" },
        { group: "z", project: "gone", role: "member", status: "no-project" },
        { group: "w", project: null, role: null, status: "unmapped" },
      ]),
    ).toEqual([{ project: "p", role: "manager" }]);
  });
});
