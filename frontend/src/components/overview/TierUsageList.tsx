import type { TierUsage } from "@/api/overview";
import { Badge, ProgressBar } from "@/components/ui";
import { formatBytes, formatCount, formatPercent, usedShare } from "@/lib/format";

function TierUsageItem({ tier, color, totalBytes }: { tier: TierUsage; color: string; totalBytes: number }) {
  const share = usedShare(tier.used_bytes, tier.capacity_bytes);
  const capacity = tier.capacity_bytes ?? null;
  const valueText =
    capacity && share != null
      ? `${formatBytes(tier.used_bytes)} of ${formatBytes(capacity)} (${formatPercent(share)})`
      : `${formatBytes(tier.used_bytes)}, no capacity set`;
  return (
    <li className="tier-usage">
      <div className="tier-usage__head">
        <span className="tier-usage__swatch" style={{ background: color }} aria-hidden="true" />
        <h3 className="tier-usage__name">{tier.name}</h3>
        <div className="tier-usage__badges">
          <Badge>{tier.driver}</Badge>
          {tier.offline ? (
            <Badge tone="warning" title="Archive tier: objects need a restore before they can be read">
              offline archive
            </Badge>
          ) : null}
          {tier.storage_classes.map((c) => (
            <Badge key={c} tone="info">
              {c}
            </Badge>
          ))}
        </div>
      </div>
      {capacity ? (
        <ProgressBar
          label={`${tier.name} used capacity`}
          value={tier.used_bytes}
          max={capacity}
          valueText={valueText}
          caption={
            <span className="tier-usage__caption">
              <span>
                <strong>{formatBytes(tier.used_bytes)}</strong> of {formatBytes(capacity)} used
              </span>
              <span>{formatPercent(share ?? 0)}</span>
            </span>
          }
        />
      ) : (
        // Without a capacity the bar shows the tier's share of everything stored, in a neutral colour.
        <ProgressBar
          label={`${tier.name} share of all stored data`}
          value={tier.used_bytes}
          max={Math.max(totalBytes, 1)}
          valueText={`${formatBytes(tier.used_bytes)}, ${formatPercent(totalBytes ? tier.used_bytes / totalBytes : 0)} of all stored data; no capacity limit`}
          thresholds={null}
          tone="neutral"
          caption={
            <span className="tier-usage__caption">
              <span>
                <strong>{formatBytes(tier.used_bytes)}</strong> stored · no capacity limit
              </span>
              <span>{formatPercent(totalBytes ? tier.used_bytes / totalBytes : 0)} of all data</span>
            </span>
          }
        />
      )}
      <p className="tier-usage__objects">{formatCount(tier.object_count)} objects</p>
    </li>
  );
}

/** Every tier with its used volume against its capacity (binary units: GiB, TiB). */
export function TierUsageList({ tiers, colors }: { tiers: TierUsage[]; colors: Map<string, string> }) {
  const totalBytes = tiers.reduce((sum, t) => sum + t.used_bytes, 0);
  return (
    <ul className="tier-usage-list">
      {tiers.map((t) => (
        <TierUsageItem key={t.id} tier={t} color={colors.get(t.name) ?? "#4b5563"} totalBytes={totalBytes} />
      ))}
    </ul>
  );
}
