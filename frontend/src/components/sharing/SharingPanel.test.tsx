import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { SharingPanel } from "./SharingPanel";

afterEach(() => vi.unstubAllGlobals());

const empty = {
  bucket: "belle2",
  owner: "alice",
  users: [],
  public_prefixes: [],
  policy: null,
  policy_words: [],
  policy_public: false,
  policy_problems: [],
  acl_grants: [],
  ownership: null,
  public_block: null,
};

function renderPanel() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <SharingPanel bucket="belle2" />
    </QueryClientProvider>,
  );
}

describe("SharingPanel", () => {
  it("asks before making a prefix public and sends nothing when cancelled", async () => {
    const published = {
      ...empty,
      public_prefixes: ["release/"],
      policy: "{}",
      policy_public: true,
      policy_words: ["TierpilotPublic1: allows anyone, including anonymous (unsigned) requests s3:GetObject"],
    };
    const { requests } = installFakeApi({
      "GET /api/buckets/belle2/sharing": () => ({ body: empty }),
      "POST /api/buckets/belle2/sharing/public": () => ({ body: published }),
    });
    renderPanel();
    await userEvent.type(await screen.findByLabelText("Prefix"), "release/");
    await userEvent.click(screen.getByRole("button", { name: "Make public…" }));
    let dialog = await screen.findByRole("alertdialog", { name: "Make this public?" });
    expect(dialog).toHaveTextContent(/without credentials|no account and no key/);
    await userEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(requests.filter((r) => r.method === "POST")).toEqual([]);
    await userEvent.click(screen.getByRole("button", { name: "Make public…" }));
    dialog = await screen.findByRole("alertdialog", { name: "Make this public?" });
    await userEvent.click(within(dialog).getByRole("button", { name: "Make public" }));
    await vi.waitFor(() =>
      expect(requests.filter((r) => r.method === "POST").map((r) => r.body)).toEqual([
        { prefix: "release/", confirm: true },
      ]),
    );
    expect(await screen.findByText("release/")).toBeInTheDocument();
  });

  it("checks a policy on the server and shows what it allows, or why it is refused", async () => {
    installFakeApi({
      "GET /api/buckets/belle2/sharing": () => ({ body: empty }),
      "POST /api/buckets/belle2/sharing/policy/check": (req) =>
        (req.body as { policy: string }).policy.includes("other")
          ? {
              body: {
                valid: false,
                error: "Action does not apply to any resource(s) in statement",
                words: [],
                public: false,
              },
            }
          : {
              body: {
                valid: true,
                error: null,
                words: ["Mine: allows bob s3:GetObject on belle2/*"],
                public: false,
              },
            },
    });
    renderPanel();
    const editor = await screen.findByLabelText("Policy (JSON)");
    await userEvent.type(editor, "other");
    await userEvent.click(screen.getByRole("button", { name: "Check" }));
    expect(await screen.findByText(/does not apply to any resource/)).toBeInTheDocument();
    await userEvent.clear(editor);
    await userEvent.type(editor, "mine");
    await userEvent.click(screen.getByRole("button", { name: "Check" }));
    const allowed = await screen.findByRole("region", { name: "What this policy would allow" });
    expect(allowed).toHaveTextContent("Mine: allows bob s3:GetObject on belle2/*");
  });

  it("tells the owner a stored policy cannot be read, and lets them delete it", async () => {
    const broken = {
      ...empty,
      policy: '{"Version": "2012-10-17", "Statement": [',
      policy_problems: [
        "the policy cannot be read (Policies must be valid JSON): every request of anyone but the bucket owner and admins is denied",
      ],
      policy_words: [
        "statement 1 (unreadable, read at its widest): denies everyone but the bucket owner * on *",
      ],
    };
    let stored: object = broken;
    const { requests } = installFakeApi({
      "GET /api/buckets/belle2/sharing": () => ({ body: stored }),
      "DELETE /api/buckets/belle2/sharing/policy": () => {
        stored = empty;
        return { status: 204 };
      },
    });
    renderPanel();
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("The stored policy cannot be read in full");
    expect(within(alert).getByRole("list", { name: "What cannot be read" })).toHaveTextContent(
      "Policies must be valid JSON",
    );
    expect(screen.getByLabelText("Policy (JSON)")).toHaveValue(broken.policy);
    await userEvent.click(screen.getByRole("button", { name: "Delete policy" }));
    await vi.waitFor(() => expect(requests.map((r) => r.method)).toContain("DELETE"));
    await vi.waitFor(() => expect(screen.queryByRole("alert")).not.toBeInTheDocument());
  });
});
