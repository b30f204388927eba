import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { FolderView } from "./FolderView";
import { folderNameError } from "./NewFolderDialog";

afterEach(() => vi.unstubAllGlobals());

const listing = {
  bucket: "belle2",
  prefix: "runs/",
  delimiter: "/",
  folders: [],
  // "runs/" is the folder's own marker: not an entry of it
  objects: [
    {
      key: "runs/",
      size: 0,
      etag: "d41d8cd98f00b204e9800998ecf8427e",
      storage_class: "STANDARD",
      tier: "hot-disk",
      tier_offline: false,
      last_modified: "2026-11-22T10:00:00Z",
      restore_state: null,
    },
  ],
  truncated: false,
  next_cursor: null,
};

function renderFolder() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const openFolder = vi.fn();
  render(
    <QueryClientProvider client={client}>
      <FolderView
        bucket="belle2"
        prefix="runs/"
        openFolder={openFolder}
        openObject={() => {}}
        onRestoreCreated={() => {}}
        onBucketDeleted={() => {}}
      />
    </QueryClientProvider>,
  );
  return { openFolder };
}

describe("folderNameError", () => {
  it("accepts names and nested names, refuses empty levels, dot levels, control characters, long paths", () => {
    expect(folderNameError("runs/", "2026")).toBeUndefined();
    expect(folderNameError("runs/", "2026/raw/")).toBeUndefined();
    expect(folderNameError("", "")).toBeUndefined();
    expect(folderNameError("", "/abs")).toMatch(/empty levels/);
    expect(folderNameError("", "a//b")).toMatch(/empty levels/);
    expect(folderNameError("", "a/../b")).toMatch(/“\.\.”/);
    expect(folderNameError("", "tab\there")).toMatch(/control characters/);
    expect(folderNameError("", "é".repeat(512))).toMatch(/1024 bytes/);
  });
});

describe("NewFolderDialog", () => {
  it("creates the folder below the current one and opens it", async () => {
    const { requests } = installFakeApi({
      "GET /api/buckets/belle2/objects": () => ({ body: listing }),
      "POST /api/buckets/belle2/folders": (req) => ({
        status: 201,
        body: { key: (req.body as { prefix: string }).prefix },
      }),
    });
    const { openFolder } = renderFolder();
    expect(await screen.findByText("This folder is empty")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "New folder" }));
    const dialog = await screen.findByRole("dialog", { name: "New folder" });
    const create = within(dialog).getByRole("button", { name: "Create folder" });
    expect(create).toBeDisabled();
    await userEvent.type(within(dialog).getByLabelText("Folder name"), "2026//raw");
    expect(within(dialog).getByText(/empty levels/)).toBeInTheDocument();
    expect(create).toBeDisabled();
    await userEvent.clear(within(dialog).getByLabelText("Folder name"));
    await userEvent.type(within(dialog).getByLabelText("Folder name"), "2026/raw");
    expect(create).toBeEnabled();
    await userEvent.click(create);
    await vi.waitFor(() => expect(openFolder).toHaveBeenCalledWith("runs/2026/raw/"));
    const posted = requests.filter((r) => r.method === "POST");
    expect(posted.map((r) => r.body)).toEqual([{ prefix: "runs/2026/raw/" }]);
  });

  it("shows the server's refusal in the dialog and keeps it open", async () => {
    installFakeApi({
      "GET /api/buckets/belle2/objects": () => ({ body: listing }),
      "POST /api/buckets/belle2/folders": () => ({
        status: 409,
        body: { detail: "prefix: a folder 'runs/2026/' already exists in 'belle2'" },
      }),
    });
    const { openFolder } = renderFolder();
    await userEvent.click(await screen.findByRole("button", { name: "New folder" }));
    const dialog = await screen.findByRole("dialog", { name: "New folder" });
    await userEvent.type(within(dialog).getByLabelText("Folder name"), "2026{Enter}");
    expect(await within(dialog).findByText(/already exists/)).toBeInTheDocument();
    expect(openFolder).not.toHaveBeenCalled();
  });
});
