import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { BookButton, whyNotBookable } from "./BookButton";

describe("BookButton", () => {
  it("says why booking is disabled, in the order a person fixes the form", () => {
    const ok = { bucket: "b", windowError: null, rateError: null, doesNotFit: false };
    expect(whyNotBookable({ ...ok, bucket: "", rateError: "Enter a rate above 0 MB/s" })).toBe(
      "Choose a bucket to book for.",
    );
    expect(whyNotBookable({ ...ok, rateError: "Enter a rate above 0 MB/s" })).toMatch(/^Fix the rate/);
    expect(whyNotBookable({ ...ok, doesNotFit: true })).toMatch(/does not fit/);
    expect(whyNotBookable(ok)).toBeNull();
  });

  it("describes the disabled button by its reason, and otherwise says a booking is a floor, not a cap", () => {
    const { rerender } = render(<BookButton pending={false} blocked="Choose a bucket to book for." />);
    const button = screen.getByRole("button", { name: "Book reservation" });
    expect(button).toBeDisabled();
    expect(button).toHaveAccessibleDescription("Choose a bucket to book for.");
    rerender(<BookButton pending={false} blocked={null} />);
    expect(button).toBeEnabled();
    expect(button).toHaveAccessibleDescription(/guaranteed floor, not a cap/);
  });
});
