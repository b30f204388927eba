import { describe, expect, it } from "vitest";
import type { Preview } from "@/api/lifecycle";
import { chartRows, maxStack, seriesOf, usd } from "./preview-chart-data";
import {
  daysRuleTiming,
  describeActions,
  describeFilter,
  emptyDraft,
  fromRule,
  nextUtcMidnight,
  parseTags,
  toRule,
} from "./rule-form";

describe("toRule", () => {
  it("builds S3's filter: one condition directly, several under And", () => {
    const one = toRule({ ...emptyDraft(), id: "a", prefix: "raw/" });
    expect(one.rule?.filter).toEqual({ prefix: "raw/" });
    const none = toRule({ ...emptyDraft(), id: "a" });
    expect(none.rule?.filter).toEqual({});
    const many = toRule({
      ...emptyDraft(),
      id: "a",
      prefix: "logs/",
      tags: "kind=log, team",
      sizeGreaterThan: "10",
    });
    expect(many.rule?.filter).toEqual({
      and: {
        prefix: "logs/",
        tags: [
          { key: "kind", value: "log" },
          { key: "team", value: "" },
        ],
        object_size_greater_than: 10,
        object_size_less_than: null,
      },
    });
  });

  it("writes days or midnight-UTC dates and drops empty transition rows", () => {
    const byDays = toRule({
      ...emptyDraft(),
      transitions: [
        { when: "30", storageClass: "STANDARD_IA" },
        { when: "", storageClass: "GLACIER" },
      ],
      expiration: "400",
    });
    expect(byDays.rule?.transitions).toEqual([{ storage_class: "STANDARD_IA", days: 30 }]);
    expect(byDays.rule?.expiration).toEqual({ days: 400 });
    const byDate = toRule({
      ...emptyDraft(),
      mode: "date",
      transitions: [{ when: "2027-01-01", storageClass: "GLACIER" }],
    });
    expect(byDate.rule?.transitions).toEqual([{ storage_class: "GLACIER", date: "2027-01-01T00:00:00Z" }]);
  });

  it("says what is wrong", () => {
    expect(
      toRule({ ...emptyDraft(), transitions: [{ when: "soon", storageClass: "GLACIER" }] }).errors,
    ).toEqual(["Transition 1 (days) must be a whole number of at least 0"]);
    expect(toRule({ ...emptyDraft(), transitions: [] }).errors).toEqual([
      "Add a transition, an expiration or an upload clean-up",
    ]);
    expect(toRule({ ...emptyDraft(), expiration: "0" }).errors?.[0]).toContain("Expiration (days)");
  });

  it("round-trips through fromRule", () => {
    const draft = {
      ...emptyDraft(),
      id: "r1",
      enabled: false,
      prefix: "p/",
      tags: "a=b",
      transitions: [
        { when: "30", storageClass: "STANDARD_IA" },
        { when: "90", storageClass: "GLACIER" },
      ],
      expiration: "365",
      abortUploadsDays: "7",
    };
    const rule = toRule(draft).rule;
    expect(rule).toBeDefined();
    if (rule) expect(fromRule(rule)).toEqual(draft);
  });
});

describe("descriptions", () => {
  it("summarises filters and actions", () => {
    const rule = toRule({
      ...emptyDraft(),
      prefix: "raw/",
      transitions: [
        { when: "30", storageClass: "STANDARD_IA" },
        { when: "90", storageClass: "GLACIER" },
      ],
      expiration: "365",
    }).rule;
    if (!rule) throw new Error("no rule");
    expect(describeFilter(rule)).toBe("prefix raw/");
    expect(describeActions(rule)).toBe("STANDARD_IA after 30 d → GLACIER after 90 d; expire after 365 d");
    expect(parseTags(" x = 1 ,y")).toEqual([
      { key: "x", value: "1" },
      { key: "y", value: "" },
    ]);
  });
});

describe("preview chart data", () => {
  const preview = {
    days: 2,
    series: [
      {
        date: "2026-11-22",
        moves: [{ tier: "infrequent", objects: 2, bytes: 100 }],
        expirations: { objects: 1, bytes: 5 },
      },
      {
        date: "2026-11-23",
        moves: [
          { tier: "archive", objects: 1, bytes: 50 },
          { tier: "infrequent", objects: 1, bytes: 10 },
        ],
        expirations: { objects: 0, bytes: 0 },
      },
    ],
  } as unknown as Preview;

  it("has one stacked row per day and one series per target tier", () => {
    expect(seriesOf(preview)).toEqual(["infrequent", "archive"]);
    const rows = chartRows(preview, "bytes");
    expect(rows).toEqual([
      { date: "2026-11-22", infrequent: 100, archive: 0, expired: 5 },
      { date: "2026-11-23", infrequent: 10, archive: 50, expired: 0 },
    ]);
    expect(maxStack(rows)).toBe(105);
    expect(chartRows(preview, "objects")[0]).toEqual({
      date: "2026-11-22",
      infrequent: 2,
      archive: 0,
      expired: 1,
    });
  });

  it("formats money from decimal strings", () => {
    expect(usd("12.345")).toBe("$12.35");
    expect(usd("0.0012", true)).toBe("$0.0012 / month");
  });
});

describe("days-rule timing", () => {
  it("names the next midnight UTC, also just before and at midnight", () => {
    expect(nextUtcMidnight(Date.parse("2026-11-24T23:59:59Z"))).toBe(Date.parse("2026-11-25T00:00:00Z"));
    expect(nextUtcMidnight(Date.parse("2026-11-25T00:00:00Z"))).toBe(Date.parse("2026-11-26T00:00:00Z"));
    expect(nextUtcMidnight(Date.parse("2026-12-31T12:00:00Z"))).toBe(Date.parse("2027-01-01T00:00:00Z"));
    expect(daysRuleTiming(Date.parse("2026-11-24T10:00:00Z"))).toContain("0-day rule therefore waits");
  });
});
