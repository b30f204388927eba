import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { Button } from "./Button";
import { ConfirmDialog } from "./ConfirmDialog";
import { ErrorBanner } from "./ErrorBanner";
import { Input } from "./Field";
import { ProgressBar } from "./ProgressBar";
import { chooseLayout, Table } from "./Table";

describe("ProgressBar", () => {
  it("exposes value, range and a spoken value", () => {
    render(<ProgressBar label="hot-disk used" value={30} max={120} valueText="30 GiB of 120 GiB" />);
    const bar = screen.getByRole("progressbar", { name: "hot-disk used" });
    expect(bar).toHaveAttribute("aria-valuenow", "30");
    expect(bar).toHaveAttribute("aria-valuemax", "120");
    expect(bar).toHaveAttribute("aria-valuetext", "30 GiB of 120 GiB");
  });

  it("turns red past the danger share and never draws beyond full", () => {
    const { container } = render(<ProgressBar label="x" value={150} max={100} />);
    const fill = container.querySelector(".ui-progress__fill") as HTMLElement;
    expect(fill.className).toContain("ui-progress__fill--danger");
    expect(Number.parseFloat(fill.style.width)).toBe(100);
  });
});

describe("ErrorBanner", () => {
  const answered = (status: number, message: string) => Object.assign(new Error(message), { status });

  it("says a 404 is not found and a 403 not allowed, with the server's words and no retry", () => {
    const onRetry = vi.fn();
    const { rerender } = render(
      <ErrorBanner error={answered(404, "The specified bucket does not exist")} onRetry={onRetry} />,
    );
    expect(screen.getByRole("alert")).toHaveTextContent("Not found");
    expect(screen.getByRole("alert")).toHaveTextContent("The specified bucket does not exist");
    expect(screen.queryByRole("button", { name: "Try again" })).toBeNull();
    rerender(<ErrorBanner error={answered(403, "bucket 'b' is shared with you without s3:PutObject")} />);
    expect(screen.getByRole("alert")).toHaveTextContent("Not allowed");
  });

  it("offers a retry for other failures", async () => {
    const onRetry = vi.fn();
    render(<ErrorBanner error={answered(503, "database unavailable")} onRetry={onRetry} />);
    expect(screen.getByRole("alert")).toHaveTextContent("Something went wrong");
    await userEvent.click(screen.getByRole("button", { name: "Try again" }));
    expect(onRetry).toHaveBeenCalledOnce();
  });
});

describe("Input", () => {
  it("is labelled and announces its hint and error", () => {
    render(<Input label="Password" hint="At least 8 characters." error="Too short." />);
    const input = screen.getByLabelText("Password");
    expect(input).toHaveAttribute("aria-invalid", "true");
    expect(input).toHaveAccessibleDescription("At least 8 characters. Too short.");
  });
});

describe("Button", () => {
  it("blocks clicks while loading", async () => {
    const onClick = vi.fn();
    render(
      <Button loading onClick={onClick}>
        Save
      </Button>,
    );
    const button = screen.getByRole("button", { name: "Save" });
    expect(button).toBeDisabled();
    expect(button).toHaveAttribute("aria-busy", "true");
    await userEvent.click(button);
    expect(onClick).not.toHaveBeenCalled();
  });
});

describe("Table", () => {
  it("renders headers and cells, and the empty content when there are no rows", () => {
    const columns = [{ id: "n", header: "Name", cell: (r: { n: string }) => r.n }];
    const { rerender } = render(
      <Table caption="Things" columns={columns} rows={[{ n: "a" }]} rowKey={(r) => r.n} />,
    );
    expect(screen.getByRole("table", { name: "Things" })).toBeInTheDocument();
    expect(screen.getByRole("cell", { name: "a" })).toBeInTheDocument();
    rerender(
      <Table caption="Things" columns={columns} rows={[]} rowKey={(r) => r.n} empty={<p>Nothing</p>} />,
    );
    expect(screen.queryByRole("table")).not.toBeInTheDocument();
    expect(screen.getByText("Nothing")).toBeInTheDocument();
  });

  it("names each cell by its column for the card layout, a hidden header by its label", () => {
    const columns = [
      { id: "n", header: "Name", cell: (r: { n: string }) => r.n },
      {
        id: "x",
        header: <span className="visually-hidden">Actions</span>,
        label: "Actions",
        cell: () => "Edit",
      },
      { id: "y", header: <span />, cell: () => "—" },
    ];
    render(<Table caption="Things" columns={columns} rows={[{ n: "a" }]} rowKey={(r) => r.n} />);
    const cells = screen.getAllByRole("cell");
    expect(cells.map((c) => c.getAttribute("data-label"))).toEqual(["Name", "Actions", null]);
  });

  it("is a table from 640 px of screen up and cards only below", () => {
    expect(chooseLayout(1280)).toBe("table");
    expect(chooseLayout(1024)).toBe("table");
    expect(chooseLayout(640)).toBe("table");
    expect(chooseLayout(639)).toBe("cards");
    expect(chooseLayout(390)).toBe("cards");
  });
});

describe("ConfirmDialog", () => {
  it("focuses Cancel first and reports the choice", async () => {
    const onConfirm = vi.fn();
    const onCancel = vi.fn();
    render(
      <ConfirmDialog
        open
        title="Delete this key?"
        description="It stops working at once."
        confirmLabel="Delete key"
        onConfirm={onConfirm}
        onCancel={onCancel}
      />,
    );
    const dialog = screen.getByRole("alertdialog", { name: "Delete this key?" });
    expect(dialog).toHaveAccessibleDescription("It stops working at once.");
    expect(screen.getByRole("button", { name: "Cancel" })).toHaveFocus();
    await userEvent.click(screen.getByRole("button", { name: "Delete key" }));
    expect(onConfirm).toHaveBeenCalledTimes(1);
    await userEvent.click(screen.getByRole("button", { name: "Cancel" }));
    expect(onCancel).toHaveBeenCalledTimes(1);
  });
});
