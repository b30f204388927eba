import { useQuery } from "@tanstack/react-query";
import { downloadUrl, objectQueryOptions } from "@/api/catalog";
import { Badge, CopyField, Dialog, QueryState } from "@/components/ui";
import { formatBytes, formatDateTime } from "@/lib/format";
import { RestoreBadge } from "./RestoreBadge";
import { VersionsPanel } from "./VersionsPanel";
import "./browser.css";

/** Everything the catalog knows about one object, with its download, in a dialog over the listing
 * (the folder keeps its place and selection behind it). */
export function ObjectDetailCard({
  bucket,
  objectKey,
  onClose,
}: {
  bucket: string;
  objectKey: string;
  onClose: () => void;
}) {
  const detail = useQuery(objectQueryOptions(bucket, objectKey));
  const o = detail.data;
  return (
    <Dialog open title="Object" onClose={onClose} size="lg">
      <QueryState query={detail} loading="Loading the object…" />
      {o ? (
        <div className="stack">
          <p className="browser-detail__key mono">{o.key}</p>
          <dl className="browser-facts">
            <dt>Size</dt>
            <dd>
              {formatBytes(o.size)} <span className="muted">({o.size.toLocaleString("en-US")} bytes)</span>
            </dd>
            <dt>Tier</dt>
            <dd>
              {o.tier} {o.tier_offline ? <Badge tone="info">offline</Badge> : null}
            </dd>
            <dt>Storage class</dt>
            <dd>{o.storage_class}</dd>
            <dt>Restore state</dt>
            <dd>
              <RestoreBadge state={o.restore_state} offline={o.tier_offline} readable={o.readable} />
              {o.restore_expiry ? (
                <span className="muted"> until {formatDateTime(o.restore_expiry)}</span>
              ) : null}
            </dd>
            <dt>ETag</dt>
            <dd className="mono">{o.etag}</dd>
            <dt>Checksum</dt>
            <dd className="mono">
              {o.checksum_algorithm ? `${o.checksum_algorithm} ${o.checksum_value}` : "—"}
            </dd>
            <dt>Content type</dt>
            <dd>{o.content_type}</dd>
            <dt>Last modified</dt>
            <dd>{formatDateTime(o.last_modified)}</dd>
            <dt>Last read</dt>
            <dd>{formatDateTime(o.last_access_at)}</dd>
            {o.parts_count ? (
              <>
                <dt>Uploaded in</dt>
                <dd>{o.parts_count} parts</dd>
              </>
            ) : null}
            {Object.entries(o.user_metadata).map(([k, v]) => (
              <MetaRow key={k} name={`x-amz-meta-${k}`} value={String(v)} />
            ))}
            {Object.entries(o.tags).map(([k, v]) => (
              <MetaRow key={`tag-${k}`} name={`tag ${k}`} value={String(v)} />
            ))}
          </dl>
          <CopyField label="S3 URI" value={o.s3_uri} />
          {o.readable ? (
            <a
              className="ui-button ui-button--primary ui-button--md"
              href={downloadUrl(bucket, o.key)}
              download
            >
              Download
            </a>
          ) : (
            <p className="muted">Archived: restore it before it can be downloaded.</p>
          )}
          <VersionsPanel bucket={bucket} objectKey={o.key} />
        </div>
      ) : null}
    </Dialog>
  );
}

function MetaRow({ name, value }: { name: string; value: string }) {
  return (
    <>
      <dt>{name}</dt>
      <dd className="mono">{value}</dd>
    </>
  );
}
