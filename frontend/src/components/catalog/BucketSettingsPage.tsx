import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { bucketSettingsQueryOptions, bucketsQueryOptions } from "@/api/catalog";
import { Card, PageHeader, QueryState, Select } from "@/components/ui";
import { CorsCard } from "./CorsCard";
import { ObjectLockCard } from "./ObjectLockCard";
import { VersioningCard } from "./VersioningCard";
import "./browser.css";

/** A bucket's settings: versioning, object lock and its default retention, CORS rules, and the links to its
 * lifecycle rules and sharing. */
export function BucketSettingsPage({
  bucket,
  onBucket,
}: {
  bucket: string;
  onBucket: (bucket: string) => void;
}) {
  const buckets = useQuery(bucketsQueryOptions());
  const settings = useQuery(bucketSettingsQueryOptions(bucket));
  const options = (buckets.data ?? []).map((b) => ({ value: b.name, label: b.name }));
  return (
    <>
      <PageHeader
        title="Bucket settings"
        description="Versioning, object lock, CORS for browser uploads, lifecycle and sharing of one bucket."
        actions={
          bucket ? (
            <Link to="/browser" search={{ bucket }} className="ui-button ui-button--secondary ui-button--md">
              Open in the Browser
            </Link>
          ) : null
        }
      />
      <div className="stack-lg">
        <Select
          label="Bucket"
          value={bucket}
          onChange={(e) => onBucket(e.target.value)}
          options={[{ value: "", label: "Choose a bucket…" }, ...options]}
        />
        <QueryState query={buckets} loading={false} />
        <QueryState query={settings} loading={bucket ? "Loading the bucket's settings…" : false}>
          {(data) =>
            bucket ? (
              <div className="bucket-settings" key={bucket}>
                <VersioningCard bucket={bucket} settings={data} />
                <ObjectLockCard bucket={bucket} settings={data} />
                <CorsCard bucket={bucket} settings={data} />
                <Card title="Lifecycle" description="Rules that move objects down the tiers or expire them.">
                  <Link to="/lifecycle" search={{ bucket }}>
                    Lifecycle rules of {bucket}
                  </Link>
                </Card>
                <Card
                  title="Sharing"
                  description="Grants to other users, public prefixes and the bucket policy."
                >
                  <Link to="/sharing" search={{ bucket }}>
                    Sharing of {bucket}
                  </Link>
                </Card>
              </div>
            ) : null
          }
        </QueryState>
      </div>
    </>
  );
}
