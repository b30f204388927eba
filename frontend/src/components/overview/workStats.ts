import type { BucketFixity } from "@/api/integrity";
import type { Project } from "@/api/projects";

/** Failing objects over every bucket the caller sees, and how many buckets hold them. */
export function fixitySummary(buckets: BucketFixity[]) {
  return {
    buckets: buckets.length,
    failures: buckets.reduce((sum, b) => sum + b.failures, 0),
    failingBuckets: buckets.filter((b) => b.failures > 0).length,
    checkedObjects: buckets.reduce((sum, b) => sum + b.checked_objects, 0),
  };
}

/** A project's use of its tighter quota (bytes or objects); null without a quota. */
export function quotaShare(p: Project): number | null {
  const shares = [
    p.quota_bytes ? p.used_bytes / p.quota_bytes : null,
    p.quota_objects ? p.used_objects / p.quota_objects : null,
  ].filter((s): s is number => s !== null);
  return shares.length ? Math.max(...shares) : null;
}

/** The fullest project against its quota and how many are at 80 % or more; null when no project has a quota. */
export function quotaSummary(projects: Project[]) {
  const shares = projects.flatMap((p) => {
    const share = quotaShare(p);
    return share === null ? [] : [{ name: p.name, share }];
  });
  if (!shares.length) return null;
  const fullest = shares.reduce((a, b) => (b.share > a.share ? b : a));
  return { fullest, withQuota: shares.length, nearFull: shares.filter((s) => s.share >= 0.8).length };
}
