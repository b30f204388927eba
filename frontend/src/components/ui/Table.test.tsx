import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { type Key, useState } from "react";
import { describe, expect, it } from "vitest";
import { Table } from "./Table";
import { nextToFold } from "./table-layout";
import { applyTick } from "./table-selection";
import { compareValues, nextSort } from "./table-sort";
import { visibleRange } from "./table-window";

interface Thing {
  name: string;
  size: number;
}
const THINGS: Thing[] = [
  { name: "b.root", size: 20 },
  { name: "a.root", size: 300 },
  { name: "c.root", size: 1 },
  { name: "d.root", size: 50 },
];
const columns = [
  { id: "name", header: "Name", cell: (t: Thing) => t.name, sortValue: (t: Thing) => t.name },
  { id: "size", header: "Size", cell: (t: Thing) => String(t.size), sortValue: (t: Thing) => t.size },
];

function Picking() {
  const [selected, setSelected] = useState<ReadonlySet<Key>>(new Set());
  return (
    <>
      <output>{[...selected].sort().join(",")}</output>
      <Table
        caption="Things"
        columns={columns}
        rows={THINGS}
        rowKey={(t) => t.name}
        selection={{ selected, onChange: setSelected }}
      />
    </>
  );
}

const names = () =>
  within(screen.getByRole("table"))
    .getAllByRole("row")
    .slice(1)
    .map((r) => within(r).getAllByRole("cell").at(-2)?.textContent);

describe("Table", () => {
  it("sorts by a column: ascending, descending, then the rows' own order", async () => {
    render(<Table caption="Things" columns={columns} rows={THINGS} rowKey={(t) => t.name} />);
    const size = screen.getByRole("button", { name: /Size/ });
    await userEvent.click(size);
    expect(screen.getByRole("columnheader", { name: /Size/ })).toHaveAttribute("aria-sort", "ascending");
    const cells = () =>
      screen
        .getAllByRole("row")
        .slice(1)
        .map((r) => r.textContent);
    expect(cells()).toEqual(["c.root1", "b.root20", "d.root50", "a.root300"]);
    await userEvent.click(size);
    expect(cells()).toEqual(["a.root300", "d.root50", "b.root20", "c.root1"]);
    await userEvent.click(size);
    expect(cells()[0]).toBe("b.root20");
  });

  it("selects all, and a shift-click selects the range from the previous click", async () => {
    render(<Picking />);
    await userEvent.click(screen.getByRole("checkbox", { name: "Select b.root" }));
    const user = userEvent.setup();
    await user.keyboard("{Shift>}");
    await user.click(screen.getByRole("checkbox", { name: "Select d.root" }));
    await user.keyboard("{/Shift}");
    expect(screen.getByRole("status")).toHaveTextContent("a.root,b.root,c.root,d.root");
    expect(names()).toHaveLength(4);
    await userEvent.click(screen.getByRole("checkbox", { name: "Select all rows" }));
    expect(screen.getByRole("status")).toHaveTextContent(/^$/);
    await userEvent.click(screen.getByRole("checkbox", { name: "Select all rows" }));
    expect(screen.getByRole("status")).toHaveTextContent("a.root,b.root,c.root,d.root");
  });

  it("renders a window of a long list and asks for more near its end", () => {
    const many = Array.from({ length: 5000 }, (_, i) => ({ name: `k${i}`, size: i }));
    let asked = 0;
    render(
      <Table
        caption="Many"
        columns={columns}
        rows={many}
        rowKey={(t) => t.name}
        virtual={{ rowHeight: 30, onNearEnd: () => (asked += 1) }}
      />,
    );
    const rendered = screen.getAllByRole("row").length;
    expect(rendered).toBeGreaterThan(20);
    expect(rendered).toBeLessThan(200);
    expect(asked).toBe(0);
  });
});

describe("table helpers", () => {
  it("folds the highest priority number first, never a priority-1 column", () => {
    const cols = [
      { id: "name" },
      { id: "class", priority: 2 },
      { id: "age", priority: 3 },
      { id: "x", priority: 3 },
    ];
    expect(nextToFold(cols, [])).toBe("x");
    expect(nextToFold(cols, ["x"])).toBe("age");
    expect(nextToFold(cols, ["x", "age"])).toBe("class");
    expect(nextToFold(cols, ["x", "age", "class"])).toBeNull();
  });

  it("ticks a range to the clicked row's new state", () => {
    const keys = ["a", "b", "c", "d"];
    expect([...applyTick(new Set(), keys, 3, 1, true)]).toEqual(["b", "c", "d"]);
    expect([...applyTick(new Set(["a", "b", "c"]), keys, 0, 2, true)]).toEqual([]);
    expect([...applyTick(new Set(), keys, 2, null, true)]).toEqual(["c"]);
  });

  it("sorts empty values last and numbers inside names naturally", () => {
    expect(["f10", "f9", "", "f1"].sort((a, b) => compareValues(a, b, "ascending"))).toEqual([
      "f1",
      "f9",
      "f10",
      "",
    ]);
    expect([1, null, 3].sort((a, b) => compareValues(a, b, "descending"))).toEqual([3, 1, null]);
    expect(nextSort({ id: "size", direction: "descending" }, "size")).toBeNull();
    expect(nextSort({ id: "size", direction: "descending" }, "name")).toEqual({
      id: "name",
      direction: "ascending",
    });
  });

  it("windows rows around the scroll position", () => {
    expect(visibleRange(100000, 30000, 600, 30)).toEqual({ start: 988, end: 1032 });
    expect(visibleRange(10, 0, 600, 30)).toEqual({ start: 0, end: 10 });
  });
});
