import { queryOptions } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type BucketFixity = Schemas["BucketFixityOut"];
export type FailingObject = Schemas["FailingObjectOut"];

export const integrityKeys = {
  all: ["integrity"] as const,
  buckets: () => [...integrityKeys.all, "buckets"] as const,
};

export const fixityQueryOptions = () =>
  queryOptions({
    queryKey: integrityKeys.buckets(),
    queryFn: () => unwrap(api.GET("/api/integrity/buckets")),
    // audits run in the background: a page left open follows them
    refetchInterval: 60_000,
  });

/** One bucket's fixity log as CSV (a plain link: the browser downloads it with the session cookie). */
export function bucketFixityCsvUrl(bucket: string): string {
  return `/api/integrity/buckets/${encodeURIComponent(bucket)}/fixity.csv`;
}

/** Every bucket's fixity log as CSV (admins). */
export const ALL_FIXITY_CSV_URL = "/api/integrity/fixity.csv";
