import { CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import type { Report } from "@/api/pricing";
import { AXIS, axisLabel, ChartFrame, GRID_STROKE, Stat } from "@/components/ui";
import { formatMoney } from "@/lib/format";

type Lifecycle = NonNullable<Report["lifecycle"]>;

function rulesText(rules: Lifecycle["policy"]["rules"]): string {
  return rules.length
    ? rules.map((r) => `after ${r.after_days} days → ${r.to}`).join(", ")
    : "keep in the first tier";
}

/** The lifecycle policy's cost month by month against keeping everything in the first tier. */
export function LifecycleResult({ lifecycle }: { lifecycle: Lifecycle }) {
  const { policy, keep_hot: hot, best } = lifecycle;
  const rows = policy.months.map((m, i) => ({
    month: m.month + 1,
    policy: m.cost.total,
    hot: hot.months[i]?.cost.total ?? 0,
    ...(best ? { best: best.months[i]?.cost.total ?? 0 } : {}),
  }));
  return (
    <>
      <div className="stat-row">
        <Stat label="Policy total" value={formatMoney(policy.total)} detail={rulesText(policy.rules)} />
        <Stat
          label="Keep everything hot"
          value={formatMoney(hot.total)}
          detail={`saves ${formatMoney(lifecycle.savings)}`}
        />
        {best ? (
          <Stat label="Best transition days" value={formatMoney(best.total)} detail={rulesText(best.rules)} />
        ) : null}
      </div>
      <ChartFrame label="Lifecycle simulation: USD per month" height={280}>
        <LineChart data={rows} margin={{ top: 8, right: 24, bottom: 24, left: 8 }}>
          <CartesianGrid stroke={GRID_STROKE} />
          <XAxis {...AXIS} dataKey="month" label={axisLabel("month", "bottom", -12)} />
          <YAxis {...AXIS} tickFormatter={(v: number) => formatMoney(v)} width={84} />
          <Tooltip formatter={(v) => formatMoney(Number(v))} labelFormatter={(m) => `month ${m}`} />
          <Legend verticalAlign="top" height={28} wrapperStyle={AXIS} />
          <Line
            dataKey="policy"
            name="policy"
            stroke="#2563eb"
            dot={false}
            strokeWidth={2}
            isAnimationActive={false}
          />
          <Line
            dataKey="hot"
            name="keep hot"
            stroke="#dc2626"
            dot={false}
            strokeWidth={2}
            isAnimationActive={false}
          />
          {best ? (
            <Line
              dataKey="best"
              name="best days"
              stroke="#059669"
              strokeDasharray="5 3"
              dot={false}
              strokeWidth={2}
              isAnimationActive={false}
            />
          ) : null}
        </LineChart>
      </ChartFrame>
    </>
  );
}
