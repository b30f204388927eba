import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { BucketSettings } from "@/api/catalog";
import { installFakeApi } from "@/test/fake-api";
import { BucketSettingsPage } from "./BucketSettingsPage";

// the page's links go to other routes; here only their text and target matter
vi.mock("@tanstack/react-router", () => ({
  Link: ({ children, to }: { children: ReactNode; to: string }) => <a href={to}>{children}</a>,
}));

afterEach(() => vi.unstubAllGlobals());

const plain: BucketSettings = { versioning: null, object_lock: false, cors: null };
const locked: BucketSettings = {
  versioning: "Enabled",
  object_lock: true,
  default_retention_mode: "GOVERNANCE",
  default_retention_days: 30,
  cors: null,
};

function renderPage(settings: BucketSettings, routes: Parameters<typeof installFakeApi>[0] = {}) {
  const api = installFakeApi({
    "GET /api/buckets": () => ({ body: [{ name: "belle2" }] }),
    "GET /api/buckets/belle2/settings": () => ({ body: settings }),
    ...routes,
  });
  const onBucket = vi.fn();
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <BucketSettingsPage bucket="belle2" onBucket={onBucket} />
    </QueryClientProvider>,
  );
  return { ...api, onBucket };
}

const card = async (title: string) =>
  (await screen.findByRole("heading", { name: title })).closest(".ui-card") as HTMLElement;

describe("BucketSettingsPage", () => {
  it("enables versioning and shows the state the server answers", async () => {
    const { requests } = renderPage(plain, {
      "PUT /api/buckets/belle2/versioning": () => ({ body: { ...plain, versioning: "Enabled" } }),
    });
    const versioning = await card("Versioning");
    expect(versioning).toHaveTextContent("Versioning is off");
    await userEvent.click(within(versioning).getByRole("button", { name: "Enable" }));
    expect(await within(versioning).findByText("enabled")).toBeInTheDocument();
    expect(requests.filter((r) => r.method === "PUT").map((r) => [r.path, r.body])).toEqual([
      ["/api/buckets/belle2/versioning", { status: "Enabled" }],
    ]);
    expect(within(versioning).getByRole("button", { name: "Suspend" })).toBeEnabled();
  });

  it("keeps versioning of a locked bucket and says lock cannot be turned on later", async () => {
    renderPage(locked);
    const versioning = await card("Versioning");
    expect(within(versioning).getByRole("button", { name: "Suspend" })).toBeDisabled();
    expect(versioning).toHaveTextContent("object lock keeps it enabled");
    expect(await screen.findByRole("link", { name: "Lifecycle rules of belle2" })).toHaveAttribute(
      "href",
      "/lifecycle",
    );
    expect(screen.getByRole("link", { name: "Sharing of belle2" })).toHaveAttribute("href", "/sharing");
  });

  it("explains that object lock is chosen at creation for a bucket without it", async () => {
    renderPage(plain);
    const lock = await card("Object lock");
    expect(lock).toHaveTextContent("cannot be turned on later");
    expect(within(lock).queryByRole("form", { name: "Default retention" })).toBeNull();
  });

  it("sends the default retention in years, and none clears it", async () => {
    const { requests } = renderPage(locked, {
      "PUT /api/buckets/belle2/lock": (req) => ({ body: { ...locked, ...(req.body as object) } }),
    });
    const form = await screen.findByRole("form", { name: "Default retention" });
    expect(within(form).getByLabelText("Period")).toHaveValue(30);
    await userEvent.selectOptions(within(form).getByLabelText("Default retention"), "COMPLIANCE");
    await userEvent.clear(within(form).getByLabelText("Period"));
    await userEvent.type(within(form).getByLabelText("Period"), "7");
    await userEvent.selectOptions(within(form).getByLabelText("Unit"), "years");
    await userEvent.click(within(form).getByRole("button", { name: "Save retention" }));
    await userEvent.selectOptions(within(form).getByLabelText("Default retention"), "");
    expect(within(form).getByLabelText("Period")).toBeDisabled();
    await userEvent.click(within(form).getByRole("button", { name: "Save retention" }));
    await vi.waitFor(() =>
      expect(requests.filter((r) => r.method === "PUT").map((r) => r.body)).toEqual([
        { mode: "COMPLIANCE", days: null, years: 7 },
        { mode: null },
      ]),
    );
  });

  it("shows the server's refusal of a retention next to the period", async () => {
    renderPage(locked, {
      "PUT /api/buckets/belle2/lock": () => ({
        status: 422,
        body: { detail: "days: a default retention is at most 36500 days" },
      }),
    });
    const form = await screen.findByRole("form", { name: "Default retention" });
    await userEvent.clear(within(form).getByLabelText("Period"));
    await userEvent.type(within(form).getByLabelText("Period"), "99999");
    await userEvent.click(within(form).getByRole("button", { name: "Save retention" }));
    expect(
      await within(form).findByText("days: a default retention is at most 36500 days"),
    ).toBeInTheDocument();
    expect(within(form).getByLabelText("Period")).toHaveAttribute("aria-invalid", "true");
  });

  it("refuses CORS text that is not a JSON list without asking the server", async () => {
    const { requests } = renderPage(plain);
    const form = await screen.findByRole("form", { name: "CORS rules" });
    const rules = within(form).getByLabelText("Rules (JSON)");
    fireEvent.change(rules, { target: { value: "{not json" } });
    await userEvent.click(within(form).getByRole("button", { name: "Save CORS rules" }));
    expect(await within(form).findByText("The rules are not valid JSON.")).toBeInTheDocument();
    fireEvent.change(rules, { target: { value: '{"origins": ["*"]}' } });
    await userEvent.click(within(form).getByRole("button", { name: "Save CORS rules" }));
    expect(await within(form).findByText("The rules are a JSON list of rules.")).toBeInTheDocument();
    expect(requests.filter((r) => r.method !== "GET")).toEqual([]);
  });

  it("saves CORS rules, counts them, and removes them", async () => {
    const rule = { origins: ["https://portal.example.org"], methods: ["PUT"], headers: ["*"] };
    const { requests } = renderPage(plain, {
      "PUT /api/buckets/belle2/cors": (req) => ({
        body: { ...plain, cors: (req.body as { rules: unknown }).rules },
      }),
      "DELETE /api/buckets/belle2/cors": () => ({ body: plain }),
    });
    const form = await screen.findByRole("form", { name: "CORS rules" });
    fireEvent.change(within(form).getByLabelText("Rules (JSON)"), {
      target: { value: JSON.stringify([rule]) },
    });
    await userEvent.click(within(form).getByRole("button", { name: "Save CORS rules" }));
    const cors = await card("CORS");
    expect(await within(cors).findByText("1 rule")).toBeInTheDocument();
    await userEvent.click(within(cors).getByRole("button", { name: "Remove CORS" }));
    expect(await within(cors).findByText("none")).toBeInTheDocument();
    expect(requests.filter((r) => r.method !== "GET").map((r) => [r.method, r.body])).toEqual([
      ["PUT", { rules: [rule] }],
      ["DELETE", undefined],
    ]);
  });

  it("switches buckets through the selector", async () => {
    const { onBucket } = renderPage(plain);
    await screen.findByRole("option", { name: "belle2" });
    await userEvent.selectOptions(screen.getByLabelText("Bucket"), "");
    expect(onBucket).toHaveBeenCalledWith("");
  });
});
