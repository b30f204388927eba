import { describe, expect, it } from "vitest";
import type { BucketFixity } from "@/api/integrity";
import type { Project } from "@/api/projects";
import { fixitySummary, quotaShare, quotaSummary } from "./workStats";

const project = (over: Partial<Project>): Project => ({
  name: "p",
  personal: false,
  quota_bytes: null,
  quota_objects: null,
  used_bytes: 0,
  used_objects: 0,
  members: [],
  buckets: [],
  created_at: "2025-01-01T00:00:00Z",
  ...over,
});

const fixity = (bucket: string, failures: number, checked: number): BucketFixity => ({
  bucket,
  objects: checked,
  checks: checked,
  checked_objects: checked,
  last_check_at: null,
  failures,
  failing: [],
});

describe("quotaShare", () => {
  it("takes the tighter of the byte and object quotas", () => {
    expect(
      quotaShare(project({ quota_bytes: 100, used_bytes: 50, quota_objects: 10, used_objects: 9 })),
    ).toBe(0.9);
  });
  it("is null without a quota", () => {
    expect(quotaShare(project({ used_bytes: 50 }))).toBeNull();
  });
});

describe("quotaSummary", () => {
  it("names the fullest project and counts those at 80 % or more", () => {
    const out = quotaSummary([
      project({ name: "a", quota_bytes: 100, used_bytes: 85 }),
      project({ name: "b", quota_bytes: 100, used_bytes: 97 }),
      project({ name: "c", quota_bytes: 100, used_bytes: 10 }),
      project({ name: "free" }),
    ]);
    expect(out).toEqual({ fullest: { name: "b", share: 0.97 }, withQuota: 3, nearFull: 2 });
  });
  it("is null when no project has a quota, so the card stays away", () => {
    expect(quotaSummary([project({})])).toBeNull();
  });
});

describe("fixitySummary", () => {
  it("adds failures over buckets and counts the buckets holding them", () => {
    expect(fixitySummary([fixity("a", 2, 10), fixity("b", 0, 5), fixity("c", 1, 3)])).toEqual({
      buckets: 3,
      failures: 3,
      failingBuckets: 2,
      checkedObjects: 18,
    });
  });
});
