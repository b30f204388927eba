import { useQuery } from "@tanstack/react-query";
import { sharingQueryOptions } from "@/api/sharing";
import { Card, QueryState } from "@/components/ui";
import { PublicCard, UsersCard } from "./GrantCards";
import { PolicyCard } from "./PolicyCard";
import "./sharing.css";

/** Who may reach one bucket besides its owner and admins: users, public prefixes and the bucket policy. */
export function SharingPanel({ bucket }: { bucket: string }) {
  const sharing = useQuery(sharingQueryOptions(bucket));
  const data = sharing.data;
  if (!data) return <QueryState query={sharing} loading="Loading the bucket's sharing…" />;
  return (
    <div className="stack-lg">
      <UsersCard bucket={bucket} users={data.users} />
      <PublicCard bucket={bucket} prefixes={data.public_prefixes} />
      <PolicyCard
        key={data.policy ?? ""}
        bucket={bucket}
        policy={data.policy ?? null}
        words={data.policy_words}
        problems={data.policy_problems ?? []}
        isPublic={data.policy_public}
      />
      <Card
        title="ACLs and settings"
        description="Set through the S3 API (put-bucket-acl, ownership controls, public access block)."
      >
        <ul className="sharing-facts">
          <li>
            Bucket ACL:{" "}
            {data.acl_grants.length ? data.acl_grants.join("; ") : `private (only the owner, ${data.owner})`}
          </li>
          <li>Object ownership: {data.ownership ?? "not set (object writer owns)"}</li>
          <li>
            Public access block:{" "}
            {data.public_block
              ? Object.entries(data.public_block)
                  .filter(([, on]) => on)
                  .map(([flag]) => flag.replaceAll("_", " "))
                  .join(", ") || "configured, all off"
              : "not configured"}
          </li>
        </ul>
      </Card>
    </div>
  );
}
