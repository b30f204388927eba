import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { IntegrityPage } from "./IntegrityPage";

afterEach(() => vi.unstubAllGlobals());

const fixity = (bucket: string, failing: number) => ({
  bucket,
  objects: 10,
  checks: failing ? 12 : 0,
  checked_objects: failing ? 10 : 0,
  last_check_at: failing ? "2026-11-20T03:00:00Z" : null,
  failures: failing,
  failing: Array.from({ length: failing }, (_, i) => ({
    key: `run/${i}.root`,
    version_id: "null",
    result: i ? "missing" : "mismatch",
    checked_at: "2026-11-20T03:00:00Z",
    algorithm: "crc32c",
    expected: "AAAA",
    found: i ? null : "BBBB",
  })),
});

function renderPage(isAdmin: boolean) {
  installFakeApi({
    "GET /api/integrity/buckets": () => ({ body: [fixity("belle2", 2), fixity("fresh", 0)] }),
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <IntegrityPage isAdmin={isAdmin} />
    </QueryClientProvider>,
  );
}

describe("IntegrityPage", () => {
  it("shows each bucket's checks and the objects whose latest check failed, with its fixity log", async () => {
    renderPage(false);
    const belle2 = await screen.findByRole("region", { name: "belle2" });
    expect(belle2).toHaveTextContent("2 failing 12 checks done; 10 of 10 objects checked");
    const rows = within(within(belle2).getByRole("table")).getAllByRole("row");
    expect(rows).toHaveLength(3);
    expect(rows[1]).toHaveTextContent("run/0.root");
    expect(rows[1]).toHaveTextContent("mismatch");
    expect(within(belle2).getByRole("link", { name: "Fixity log (CSV)" })).toHaveAttribute(
      "href",
      "/api/integrity/buckets/belle2/fixity.csv",
    );
    expect(screen.getByRole("region", { name: "fresh" })).toHaveTextContent("not checked yet");
    expect(screen.getByText("tierpilot fixity run")).toBeInTheDocument();
    expect(screen.queryByRole("link", { name: "All buckets' fixity log (CSV)" })).toBeNull();
  });

  it("offers admins every bucket's fixity log", async () => {
    renderPage(true);
    expect(await screen.findByRole("link", { name: "All buckets' fixity log (CSV)" })).toHaveAttribute(
      "href",
      "/api/integrity/fixity.csv",
    );
  });
});
