import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { BucketList } from "./BucketList";

afterEach(() => vi.unstubAllGlobals());

const bucket = (name: string) => ({
  name,
  owner: "bob",
  tier: "hot-disk",
  region: "us-east-1",
  object_count: 2,
  used_bytes: 2048,
  space_bytes: null,
  space_start: null,
  space_end: null,
  created_at: "2026-11-22T10:00:00Z",
});

const sharedBucket = (name: string, owner: string, write: boolean, list = true) => ({
  bucket: name,
  owner,
  access: ["s3:GetObject", "s3:ListBucket"],
  may_list: list,
  may_read: true,
  may_write: write,
  may_delete: write,
});

describe("BucketList", () => {
  it("lists the buckets shared with the user apart, with the owner and the rights granted", async () => {
    installFakeApi({
      "GET /api/buckets": () => ({ body: [bucket("bobs-data")] }),
      "GET /api/sharing/with-me": () => ({
        body: [
          sharedBucket("alices-data", "alice", false),
          sharedBucket("carols-data", "carol", true),
          sharedBucket("prefix-only", "dave", false, false), // nothing the Browser could list
          sharedBucket("bobs-data", "bob", true), // an admin's list has it already
        ],
      }),
    });
    const onOpen = vi.fn();
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={client}>
        <BucketList current={undefined} onOpen={onOpen} />
      </QueryClientProvider>,
    );
    const shared = await screen.findByRole("list", { name: "Shared with you" });
    const items = within(shared).getAllByRole("listitem");
    expect(items).toHaveLength(2);
    expect(items[0]).toHaveTextContent("alices-datashared by alice · read only");
    expect(items[1]).toHaveTextContent("carols-datashared by carol · you may read, upload and delete");
    expect(within(screen.getByRole("list", { name: "Buckets" })).getAllByRole("listitem")).toHaveLength(1);
    await userEvent.click(within(shared).getByRole("button", { name: /alices-data/ }));
    expect(onOpen).toHaveBeenCalledWith("alices-data");
  });
});
