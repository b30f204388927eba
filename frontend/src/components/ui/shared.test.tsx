import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { Line, LineChart } from "recharts";
import { describe, expect, it, vi } from "vitest";
import { ChartFrame } from "./ChartFrame";
import { type FieldLayout, FieldList } from "./FieldList";
import { FieldRows } from "./FieldRows";
import { QueryState } from "./QueryState";

describe("FieldList", () => {
  type Name = "volume" | "objects" | "egress" | "search" | "secret" | "note";
  const fields: Array<FieldLayout<Name>> = [
    [
      { name: "volume", label: "Stored volume (GiB)", kind: "number", help: "of the whole data set" },
      { name: "objects", label: "Objects", kind: "number", step: 1 },
    ],
    {
      name: "egress",
      label: "Downloads go to",
      kind: "select",
      options: [
        { value: "internet", label: "Internet" },
        { value: "same-region", label: "Same region" },
      ],
    },
    { name: "search", label: "Search the cheapest days", kind: "checkbox" },
    { name: "secret", label: "Secret", kind: "password" },
    { name: "note", label: "Note", kind: "textarea", rows: 3 },
  ];
  const values = { volume: "633", objects: "1000", egress: "internet", search: true, secret: "", note: "" };

  it("renders each field by its kind, labelled, with its hint, error and keyboard", () => {
    const { container } = render(
      <FieldList
        fields={fields}
        values={values}
        errors={{ "x.objects": "Enter a number" }}
        errorPrefix="x."
        onChange={() => {}}
      />,
    );
    const volume = screen.getByRole("textbox", { name: "Stored volume (GiB)" });
    expect(volume).toHaveValue("633");
    expect(volume).toHaveAttribute("inputmode", "decimal");
    expect(volume).toHaveAccessibleDescription("of the whole data set");
    const objects = screen.getByRole("textbox", { name: "Objects" });
    expect(objects).toHaveAttribute("inputmode", "numeric");
    expect(objects).toHaveAttribute("aria-invalid", "true");
    expect(screen.getByRole("combobox", { name: "Downloads go to" })).toHaveValue("internet");
    expect(screen.getByRole("checkbox", { name: "Search the cheapest days" })).toBeChecked();
    expect(screen.getByLabelText("Secret")).toHaveAttribute("type", "password");
    expect(screen.getByRole("textbox", { name: "Note" }).tagName).toBe("TEXTAREA");
    // a row of fields sits in one row element
    expect(container.querySelectorAll(".form-row")).toHaveLength(1);
    expect(container.querySelector(".form-row")?.children).toHaveLength(2);
  });

  it("reports changes by field name, text as text and checkboxes as booleans", async () => {
    const onChange = vi.fn();
    render(<FieldList fields={fields} values={values} onChange={onChange} />);
    await userEvent.type(screen.getByRole("textbox", { name: "Objects" }), "5");
    expect(onChange).toHaveBeenLastCalledWith("objects", "10005");
    await userEvent.click(screen.getByRole("checkbox", { name: "Search the cheapest days" }));
    expect(onChange).toHaveBeenLastCalledWith("search", false);
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Downloads go to" }), "same-region");
    expect(onChange).toHaveBeenLastCalledWith("egress", "same-region");
  });

  it("leaves out fields given as false", () => {
    render(
      <FieldList
        fields={[false, { name: "note", label: "Note", kind: "text" }]}
        values={values}
        onChange={() => {}}
      />,
    );
    expect(screen.getAllByRole("textbox")).toHaveLength(1);
  });
});

describe("FieldRows", () => {
  it("edits and removes one row of the same fields", async () => {
    const onChange = vi.fn();
    const rows = [
      { name: "rack", monthly: "10" },
      { name: "power", monthly: "5" },
    ];
    render(
      <FieldRows
        keyPrefix="fixed"
        rows={rows}
        fields={() => [
          { name: "name", label: "Item", kind: "text" },
          { name: "monthly", label: "USD per month", kind: "number" },
        ]}
        errors={(i) => (i === 1 ? { monthly: "At least 0" } : {})}
        removeLabel={(row) => `Remove ${row.name}`}
        onChange={onChange}
      />,
    );
    expect(screen.getAllByRole("textbox", { name: "USD per month" })[1]).toHaveAttribute(
      "aria-invalid",
      "true",
    );
    await userEvent.type(screen.getAllByRole("textbox", { name: "Item" })[1] as HTMLElement, "!");
    expect(onChange).toHaveBeenLastCalledWith([rows[0], { name: "power!", monthly: "5" }]);
    await userEvent.click(screen.getByRole("button", { name: "Remove rack" }));
    expect(onChange).toHaveBeenLastCalledWith([rows[1]]);
  });
});

describe("QueryState", () => {
  const query = <T,>(over: Partial<{ isPending: boolean; isError: boolean; error: unknown; data: T }>) => ({
    isPending: false,
    isError: false,
    error: null,
    data: undefined as T | undefined,
    ...over,
  });

  it("says it is loading, then shows the data", () => {
    const { rerender } = render(
      <QueryState query={query<string[]>({ isPending: true })} loading="Loading buckets…">
        {(names) => <p>{names.join(", ")}</p>}
      </QueryState>,
    );
    expect(screen.getByRole("status")).toHaveTextContent("Loading buckets…");
    rerender(
      <QueryState query={query({ data: ["a", "b"] })} loading="Loading buckets…">
        {(names) => <p>{names.join(", ")}</p>}
      </QueryState>,
    );
    expect(screen.queryByRole("status")).toBeNull();
    expect(screen.getByText("a, b")).toBeInTheDocument();
  });

  it("shows the error with a retry that refetches", async () => {
    const refetch = vi.fn();
    render(
      <QueryState
        query={{ ...query({ isError: true, error: new Error("database unavailable") }), refetch }}
      />,
    );
    expect(screen.getByRole("alert")).toHaveTextContent("database unavailable");
    await userEvent.click(screen.getByRole("button", { name: "Try again" }));
    expect(refetch).toHaveBeenCalledOnce();
  });

  it("shows the empty state when the data holds nothing", () => {
    render(
      <QueryState
        query={query<string[]>({ data: [] })}
        isEmpty={(d) => d.length === 0}
        empty={<p>No buckets yet</p>}
      >
        {() => <p>list</p>}
      </QueryState>,
    );
    expect(screen.getByText("No buckets yet")).toBeInTheDocument();
    expect(screen.queryByText("list")).toBeNull();
  });

  it("shows nothing for a query that has not started when told so", () => {
    const { container } = render(<QueryState query={query({ isPending: true })} loading={false} />);
    expect(container).toBeEmptyDOMElement();
  });
});

describe("ChartFrame", () => {
  const chart = (
    <LineChart data={[{ x: 1, y: 2 }]}>
      <Line dataKey="y" />
    </LineChart>
  );

  it("is a named figure with its legend", () => {
    render(
      <ChartFrame label="Throughput in MB/s" height={200} legend={[{ label: "achieved", color: "red" }]}>
        {chart}
      </ChartFrame>,
    );
    const figure = screen.getByRole("figure", { name: "Throughput in MB/s" });
    expect(figure).toHaveTextContent("achieved");
  });

  it("can be one image, and shows a placeholder instead of the chart", () => {
    render(
      <ChartFrame label="Cost of the last months" height={200} as="img" placeholder={<p>Nothing to draw</p>}>
        {chart}
      </ChartFrame>,
    );
    expect(screen.getByRole("img", { name: "Cost of the last months" })).toHaveTextContent("Nothing to draw");
  });
});
