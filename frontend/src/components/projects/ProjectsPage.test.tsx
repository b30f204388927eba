import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { ProjectsPage } from "./ProjectsPage";
import { quotaBody, validateQuota } from "./project-form";

afterEach(() => vi.unstubAllGlobals());

const GIB = 1024 ** 3;
const physics = {
  name: "physics",
  personal: false,
  quota_bytes: 10 * GIB,
  quota_objects: 1000,
  used_bytes: 9 * GIB,
  used_objects: 500,
  members: [
    { username: "alice", role: "manager", is_default: true },
    { username: "bob", role: "viewer", is_default: false },
  ],
  buckets: ["belle2"],
  created_at: "2026-11-01T00:00:00Z",
};

function renderPage(user = { username: "alice", is_admin: false }) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <ProjectsPage user={user} />
    </QueryClientProvider>,
  );
}

describe("quota form", () => {
  it("sends GiB as bytes and empty as no quota, and refuses what is not a count", () => {
    expect(quotaBody({ quota_gib: "1.5", quota_objects: "" })).toEqual({
      quota_bytes: 1.5 * GIB,
      quota_objects: null,
    });
    expect(validateQuota({ quota_gib: "-1", quota_objects: "2.5" })).toEqual({
      quota_gib: "Give a size in GiB (empty for no quota).",
      quota_objects: "Give a whole number of objects (empty for no quota).",
    });
  });
});

describe("ProjectsPage", () => {
  it("shows members, roles and use against quota, amber from 80 %", async () => {
    installFakeApi({ "GET /api/projects": () => ({ body: [physics] }) });
    renderPage({ username: "bob", is_admin: false });
    const card = await screen.findByRole("region", { name: "physics" });
    const stored = within(card).getByRole("progressbar", { name: "Stored" });
    expect(stored).toHaveAttribute("aria-valuetext", "9.00 GiB of 10.0 GiB");
    expect(stored.firstElementChild).toHaveClass("ui-progress__fill--warning");
    expect(within(card).getByRole("progressbar", { name: "Objects" }).firstElementChild).toHaveClass(
      "ui-progress__fill--ok",
    );
    expect(within(card).getByText("belle2", { exact: false })).toBeInTheDocument();
    // a viewer sees the roles but cannot change them
    expect(within(card).queryByRole("button", { name: "Add member" })).toBeNull();
    expect(within(card).queryByRole("combobox")).toBeNull();
    expect(screen.queryByRole("button", { name: "New project" })).toBeNull();
  });

  it("lets a manager change a role and remove a member", async () => {
    let current = physics;
    const { requests } = installFakeApi({
      "GET /api/projects": () => ({ body: [current] }),
      "PATCH /api/projects/physics/members/bob": () => ({ body: current }),
      "DELETE /api/projects/physics/members/bob": () => {
        current = { ...physics, members: physics.members.slice(0, 1) };
        return { body: current };
      },
    });
    renderPage();
    await userEvent.selectOptions(await screen.findByLabelText("Role of bob"), "member");
    await vi.waitFor(() =>
      expect(requests.find((r) => r.method === "PATCH")?.body).toEqual({ role: "member" }),
    );
    await userEvent.click(screen.getByRole("button", { name: "Remove bob" }));
    await userEvent.click(screen.getByRole("button", { name: "Remove member" }));
    await vi.waitFor(() => expect(screen.queryByLabelText("Role of bob")).toBeNull());
    expect(requests.some((r) => r.method === "DELETE")).toBe(true);
  });

  it("shows the API's refusal beside the field it names", async () => {
    installFakeApi({
      "GET /api/projects": () => ({ body: [physics] }),
      "POST /api/projects/physics/members": () => ({
        status: 404,
        body: { detail: "user: there is no user named 'zed'", field: "user" },
      }),
    });
    renderPage();
    await userEvent.click(await screen.findByRole("button", { name: "Add member" }));
    const dialog = screen.getByRole("dialog", { name: "Add a member to physics" });
    await userEvent.type(within(dialog).getByLabelText("Username"), "zed");
    await userEvent.click(within(dialog).getByRole("button", { name: "Add member" }));
    const username = within(dialog).getByLabelText("Username");
    await vi.waitFor(() => expect(username).toHaveAccessibleDescription("there is no user named 'zed'"));
  });

  it("sets the quota in GiB", async () => {
    const { requests } = installFakeApi({
      "GET /api/projects": () => ({ body: [physics] }),
      "PUT /api/projects/physics/quota": (req) => ({ body: { ...physics, ...(req.body as object) } }),
    });
    renderPage();
    await userEvent.click(await screen.findByRole("button", { name: "Set quota" }));
    const dialog = screen.getByRole("dialog", { name: "Quota of physics" });
    const gib = within(dialog).getByLabelText("Quota (GiB)");
    expect(gib).toHaveValue("10");
    await userEvent.clear(gib);
    await userEvent.type(gib, "20");
    await userEvent.clear(within(dialog).getByLabelText("Quota (objects)"));
    await userEvent.click(within(dialog).getByRole("button", { name: "Save quota" }));
    await vi.waitFor(() =>
      expect(requests.find((r) => r.method === "PUT")?.body).toEqual({
        quota_bytes: 20 * GIB,
        quota_objects: null,
      }),
    );
  });

  it("lets an admin create a project, naming the refused field", async () => {
    const { requests } = installFakeApi({
      "GET /api/projects": () => ({ body: [] }),
      "POST /api/projects": () => ({
        status: 409,
        body: { detail: "name: a project named 'physics' exists", field: "name" },
      }),
    });
    renderPage({ username: "root", is_admin: true });
    await screen.findByText("No projects");
    await userEvent.click(screen.getByRole("button", { name: "New project" }));
    const dialog = screen.getByRole("dialog", { name: "New project" });
    await userEvent.type(within(dialog).getByLabelText("Name"), "physics");
    await userEvent.type(within(dialog).getByLabelText("Quota (objects)"), "100");
    await userEvent.click(within(dialog).getByRole("button", { name: "Create project" }));
    await within(dialog).findByText("a project named 'physics' exists");
    expect(requests.at(-1)?.body).toEqual({ name: "physics", quota_bytes: null, quota_objects: 100 });
  });
});
