import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { configure, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { AuditLog, localToIso } from "./AuditLog";

afterEach(() => vi.unstubAllGlobals());
// the machine is shared and loaded: a first render may take longer than the default second
configure({ asyncUtilTimeout: 5000 });

function renderLog() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <AuditLog />
    </QueryClientProvider>,
  );
}

function event(id: number, name = "auth.login_ok", actor = "ada") {
  return {
    id,
    at: "2026-11-24T10:00:00Z",
    event: name,
    actor_id: 2,
    actor,
    client: "127.0.0.1",
    target: `user:${actor}`,
    detail: {},
  };
}

const names = ["auth.login_failed", "auth.login_ok", "user.disabled"];

/** The query strings the component asked /api/audit for, in order. */
function auditQueries(fetchMock: ReturnType<typeof installFakeApi>["fetchMock"]): URLSearchParams[] {
  return fetchMock.mock.calls
    .map(([input]) => new URL(input instanceof Request ? input.url : String(input)))
    .filter((u) => u.pathname === "/api/audit")
    .map((u) => u.searchParams);
}

describe("AuditLog", () => {
  it("pages older and newer with the server's cursor", async () => {
    const { fetchMock } = installFakeApi({
      "GET /api/audit": () => {
        const q = auditQueries(fetchMock).at(-1);
        return q?.get("before_id") === "51"
          ? {
              body: {
                events: [event(50, "user.disabled", "root")],
                next_before_id: null,
                event_names: names,
              },
            }
          : { body: { events: [event(52), event(51)], next_before_id: 51, event_names: names } };
      },
    });
    renderLog();
    expect(await screen.findAllByText("user:ada")).toHaveLength(2);
    expect(screen.getByRole("button", { name: "Newer" })).toBeDisabled();
    await userEvent.click(screen.getByRole("button", { name: "Older" }));
    expect(await screen.findByText("user.disabled", { selector: ".ui-badge" })).toBeInTheDocument();
    expect(screen.getByText("Page 2")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Older" })).toBeDisabled();
    await userEvent.click(screen.getByRole("button", { name: "Newer" }));
    expect(await screen.findAllByText("user:ada")).toHaveLength(2);
    // back on the newest page it is asked for again: new events may have come in
    expect(auditQueries(fetchMock).map((q) => q.get("before_id"))).toEqual([null, "51", null]);
  });

  it("applies the event, user and time filter to the list and the CSV link", async () => {
    const { fetchMock } = installFakeApi({
      "GET /api/audit": () => ({ body: { events: [], next_before_id: null, event_names: names } }),
    });
    renderLog();
    expect(await screen.findByRole("heading", { name: "No events" })).toBeInTheDocument();
    await userEvent.selectOptions(screen.getByLabelText("Event"), "auth.login_failed");
    await userEvent.type(screen.getByLabelText("User"), "ada");
    await userEvent.type(screen.getByLabelText("From"), "2026-11-01T00:00");
    await userEvent.click(screen.getByRole("button", { name: "Apply filter" }));

    const since = localToIso("2026-11-01T00:00");
    await vi.waitFor(() => expect(auditQueries(fetchMock)).toHaveLength(2));
    const q = auditQueries(fetchMock)[1] ?? new URLSearchParams();
    expect([q.get("event"), q.get("actor"), q.get("since"), q.get("until")]).toEqual([
      "auth.login_failed",
      "ada",
      since,
      null,
    ]);
    const csv = screen.getByRole("link", { name: "Export CSV" }).getAttribute("href") ?? "";
    const csvQuery = new URL(csv, "http://x").searchParams;
    expect(csv.startsWith("/api/audit.csv?")).toBe(true);
    expect([csvQuery.get("event"), csvQuery.get("actor"), csvQuery.get("since")]).toEqual([
      "auth.login_failed",
      "ada",
      since,
    ]);
  });

  it("turns a local date-time into UTC and ignores nonsense", () => {
    expect(localToIso("")).toBeUndefined();
    expect(localToIso("not a date")).toBeUndefined();
    expect(localToIso("2026-11-01T00:00")).toBe(new Date(2026, 10, 1, 0, 0).toISOString());
  });
});
