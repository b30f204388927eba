import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from "recharts";
import { currentMonth, type GroupBy, type Planned, spendCsvUrl, spendQueryOptions } from "@/api/spend";
import {
  Button,
  Card,
  ChartFrame,
  Input,
  PageHeader,
  QueryState,
  Select,
  Stat,
  Table,
} from "@/components/ui";
import { formatMoney } from "@/lib/format";
import { PlanFormDialog } from "./PlanFormDialog";
import { planColumnsFor, spendColumns } from "./spend-columns";
import { monthProgress, SPEND_COLORS, SPEND_LABELS, usedSpendComponents } from "./spend-data";
import "./spend.css";

const GROUPS: Array<{ value: GroupBy; label: string }> = [
  { value: "tier", label: "Tier" },
  { value: "bucket", label: "Bucket" },
  { value: "user", label: "User" },
];

/** What the installation's storage has cost: this month so far, its forecast, past months, the plan beside it. */
export function SpendPage() {
  const [month, setMonth] = useState(currentMonth());
  const [groupBy, setGroupBy] = useState<GroupBy>("bucket");
  const spend = useQuery(spendQueryOptions(month, groupBy));
  const data = spend.data;
  const [editing, setEditing] = useState<Planned | null>(null);
  const used = data ? usedSpendComponents(data) : [];
  const groupLabel = GROUPS.find((g) => g.value === groupBy)?.label ?? "Group";

  const columns = spendColumns(groupLabel, data?.groups ?? []);
  const planColumns = planColumnsFor(setEditing);

  return (
    <div className="spend-page">
      <PageHeader
        title="Spend"
        description="What your stored data and traffic through the gateway cost, priced with each tier's price catalog of the month (USD)."
        actions={
          <>
            <a
              className="ui-button ui-button--secondary ui-button--md"
              href={spendCsvUrl(month, groupBy)}
              download
            >
              Export CSV
            </a>
            <Button onClick={() => window.print()} disabled={!data}>
              Print statement
            </Button>
          </>
        }
      />
      <div className="spend-controls print-hide">
        <Input
          label="Month (UTC)"
          type="month"
          value={month}
          max={currentMonth()}
          onChange={(e) => e.target.value && setMonth(e.target.value)}
        />
        <Select
          label="Group by"
          value={groupBy}
          options={GROUPS}
          onChange={(e) => setGroupBy(e.target.value as GroupBy)}
        />
      </div>
      <QueryState query={spend} loading="Pricing metered usage…" retry={false}>
        {(data) => (
          <>
            <p className="print-only">
              Statement for {data.month}, by {groupLabel.toLowerCase()}, as of {new Date().toLocaleString()}.
            </p>
            <div className="spend-stats">
              <Stat
                label={`${data.month} so far`}
                value={formatMoney(data.so_far)}
                detail={monthProgress(data)}
              />
              <Stat
                label="Forecast to month end"
                value={formatMoney(data.forecast)}
                detail="what is stored now for the days left; other costs at this month's rate"
              />
            </div>
            <Card title={`By ${groupLabel.toLowerCase()}`}>
              <Table
                caption={`Spend in ${data.month} by ${groupLabel.toLowerCase()}`}
                columns={columns}
                rows={data.groups}
                rowKey={(r) => r.key}
                empty="Nothing stored or metered in this month."
              />
            </Card>
            <Card title="Last months" description="Cost per month, stacked by component (USD).">
              <ChartFrame
                as="img"
                className="spend-chart"
                label="Stacked bars of the cost of the last months"
                height={260}
              >
                <BarChart data={data.history}>
                  <CartesianGrid strokeDasharray="3 3" />
                  <XAxis dataKey="month" />
                  <YAxis tickFormatter={(v: number) => formatMoney(v)} width={80} />
                  <Tooltip formatter={(v) => formatMoney(Number(v))} />
                  <Legend />
                  {used.map((c) => (
                    // drawn at once: printing lays the chart out again at the page's width, and an
                    // animation would print its bars on the way to their places
                    <Bar
                      key={c}
                      dataKey={c}
                      stackId="cost"
                      name={SPEND_LABELS[c]}
                      fill={SPEND_COLORS[c]}
                      isAnimationActive={false}
                    />
                  ))}
                </BarChart>
              </ChartFrame>
            </Card>
            <Card
              title="Plan beside actual"
              description={`Each bucket's plan for the month: a month of every version it stores now (noncurrent ones too) and the usage saved as its plan (reads, requests, restores), priced with its tiers' catalogs; beside it the month so far. A bucket diverges beyond ${Math.round(data.divergence_share * 100)} % of its plan.`}
            >
              <Table
                caption="The plan beside the actual spend"
                columns={planColumns}
                rows={data.planned}
                rowKey={(r) => r.bucket}
                empty="No buckets."
              />
            </Card>
            <p className="spend-note">Not metered here: {data.not_metered.join("; ")}.</p>
          </>
        )}
      </QueryState>
      {editing ? (
        <PlanFormDialog
          key={editing.bucket}
          bucket={editing.bucket}
          plan={editing.plan}
          onClose={() => setEditing(null)}
        />
      ) : null}
    </div>
  );
}
