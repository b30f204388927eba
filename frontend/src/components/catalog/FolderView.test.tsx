import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { crumbs, leafName, parentPrefix } from "./browser-path";
import { FolderView } from "./FolderView";

afterEach(() => vi.unstubAllGlobals());

const object = (key: string, extra: Record<string, unknown> = {}) => ({
  key,
  size: 2048,
  etag: "abc",
  storage_class: "STANDARD",
  tier: "hot-disk",
  tier_offline: false,
  last_modified: "2026-11-22T10:00:00Z",
  restore_state: null,
  ...extra,
});

function renderFolder(props: Partial<Parameters<typeof FolderView>[0]> = {}) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const openFolder = vi.fn();
  const openObject = vi.fn();
  render(
    <QueryClientProvider client={client}>
      <FolderView
        bucket="belle2"
        prefix="runs/"
        openFolder={openFolder}
        openObject={openObject}
        onRestoreCreated={() => {}}
        onBucketDeleted={() => {}}
        {...props}
      />
    </QueryClientProvider>,
  );
  return { openFolder, openObject };
}

describe("browser paths", () => {
  it("builds crumbs and leaf names", () => {
    expect(crumbs("b", "a/b/")).toEqual([
      { label: "b", prefix: "" },
      { label: "a", prefix: "a/" },
      { label: "b", prefix: "a/b/" },
    ]);
    expect(leafName("a/", "a/x.root")).toBe("x.root");
    expect(parentPrefix("a/b/c")).toBe("a/b/");
    expect(parentPrefix("top")).toBe("");
  });
});

describe("FolderView", () => {
  it("lists folders then objects and opens what is clicked", async () => {
    const { requests } = installFakeApi({
      "GET /api/buckets/belle2/objects": (req) => ({
        body: req.path
          ? {
              bucket: "belle2",
              prefix: "runs/",
              delimiter: "/",
              folders: ["runs/2026/"],
              objects: [
                object("runs/a.root"),
                object("runs/cold.root", { tier: "archive", tier_offline: true }),
              ],
              truncated: false,
              next_cursor: null,
            }
          : undefined,
      }),
    });
    const { openFolder, openObject } = renderFolder();
    const table = await screen.findByRole("table", { name: "Contents of belle2/runs/" });
    const rows = within(table).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("2026/");
    expect(rows[2]).toHaveTextContent("a.root");
    expect(rows[3]).toHaveTextContent("archived");
    await userEvent.click(within(table).getByRole("button", { name: /2026\// }));
    expect(openFolder).toHaveBeenCalledWith("runs/2026/");
    await userEvent.click(within(table).getByRole("button", { name: "a.root" }));
    expect(openObject).toHaveBeenCalledWith("runs/a.root");
    expect(requests[0]?.path).toBe("/api/buckets/belle2/objects");
  });

  it("enables restore for archived selections and deletes after confirmation", async () => {
    const { requests } = installFakeApi({
      "GET /api/buckets/belle2/objects": () => ({
        body: {
          bucket: "belle2",
          prefix: "runs/",
          delimiter: "/",
          folders: [],
          objects: [object("runs/a.root"), object("runs/cold.root", { tier: "archive", tier_offline: true })],
          truncated: false,
          next_cursor: null,
        },
      }),
      "DELETE /api/buckets/belle2/object": () => ({ status: 204 }),
    });
    renderFolder();
    const restore = await screen.findByRole("button", { name: "Restore…" });
    expect(restore).toBeDisabled();
    await userEvent.click(await screen.findByRole("checkbox", { name: "Select runs/a.root" }));
    expect(restore).toBeDisabled();
    expect(screen.getByRole("link", { name: "Download" })).toHaveAttribute(
      "href",
      "/api/buckets/belle2/object/content?key=runs%2Fa.root",
    );
    await userEvent.click(screen.getByRole("checkbox", { name: "Select runs/cold.root" }));
    expect(restore).toBeEnabled();
    await userEvent.click(screen.getByRole("button", { name: "Delete" }));
    const confirm = await screen.findByRole("alertdialog", { name: "Delete 2 objects?" });
    await userEvent.click(within(confirm).getByRole("button", { name: "Delete" }));
    await vi.waitFor(() => expect(requests.filter((r) => r.method === "DELETE")).toHaveLength(2));
  });

  it("filters the folder on the server by the start of a name and names the tier only when it differs", async () => {
    const entries = [
      object("runs/a.root"),
      object("runs/cold.root", { storage_class: "archive", tier: "archive", tier_offline: true }),
    ];
    const { requests } = installFakeApi({
      "GET /api/buckets/belle2/objects": (req) => {
        const prefix = req.query.get("prefix") ?? "";
        return {
          body: {
            bucket: "belle2",
            prefix,
            delimiter: "/",
            folders: ["runs/2026/"].filter((f) => f.startsWith(prefix)),
            objects: entries.filter((o) => o.key.startsWith(prefix)),
            truncated: false,
            next_cursor: null,
          },
        };
      },
    });
    renderFolder();
    const table = await screen.findByRole("table", { name: "Contents of belle2/runs/" });
    expect(within(table).getAllByRole("row")[3]).not.toHaveTextContent("archive · archive");
    expect(within(table).getAllByRole("row")[2]).toHaveTextContent("STANDARD · hot-disk");
    await userEvent.type(screen.getByLabelText("Filter this folder"), "co");
    await vi.waitFor(() =>
      expect(
        within(screen.getByRole("table", { name: "Contents of belle2/runs/" })).getAllByRole("row"),
      ).toHaveLength(2),
    );
    expect(requests.at(-1)?.query.get("prefix")).toBe("runs/co");
    expect(screen.getByRole("row", { name: /cold\.root/ })).toBeInTheDocument();
    await userEvent.clear(screen.getByLabelText("Filter this folder"));
    await userEvent.type(screen.getByLabelText("Filter this folder"), "nothing-like-this");
    expect(await screen.findByText("Nothing matches")).toBeInTheDocument();
  });

  it("offers a read-only grantee listing and download, and none of the writes", async () => {
    installFakeApi({
      "GET /api/buckets/belle2/objects": () => ({
        body: {
          bucket: "belle2",
          prefix: "runs/",
          delimiter: "/",
          folders: [],
          objects: [object("runs/a.root")],
          truncated: false,
          next_cursor: null,
        },
      }),
    });
    renderFolder({ prefix: "", shared: { owner: "alice", write: false, delete: false } });
    await userEvent.click(await screen.findByRole("checkbox", { name: "Select runs/a.root" }));
    expect(screen.getByRole("link", { name: "Download" })).toBeInTheDocument();
    expect(screen.getByText(/Shared with you by/)).toHaveTextContent("Shared with you by alice: read only");
    for (const name of ["Upload files", "New folder", "Delete bucket", "Delete", "Restore…"]) {
      expect(screen.queryByRole("button", { name })).not.toBeInTheDocument();
    }
  });

  it("offers a read-write grantee uploads and deletes but not the bucket's own controls", async () => {
    installFakeApi({
      "GET /api/buckets/belle2/objects": () => ({
        body: { bucket: "belle2", prefix: "", delimiter: "/", folders: [], objects: [], truncated: false },
      }),
    });
    renderFolder({ prefix: "", shared: { owner: "alice", write: true, delete: true } });
    expect(await screen.findByRole("button", { name: "Upload files" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "New folder" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Delete" })).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Delete bucket" })).not.toBeInTheDocument();
    expect(screen.getByText(/Shared with you by/)).toHaveTextContent("you may read, upload and delete");
  });
});
