import { useQuery } from "@tanstack/react-query";
import { useRef } from "react";
import { type CatalogSummary, catalogsQueryOptions, useUploadCatalog } from "@/api/pricing";
import { Badge, Button, Card, type Column, ErrorBanner, QueryState, Table } from "@/components/ui";

const columns: Array<Column<CatalogSummary>> = [
  { id: "id", header: "Catalog", cell: (c) => <span className="mono">{c.id}</span> },
  { id: "where", header: "Provider / region", cell: (c) => `${c.provider} ${c.region}` },
  { id: "date", header: "Prices of", cell: (c) => c.valid_from },
  { id: "classes", header: "Classes", cell: (c) => c.classes.join(", "), hideOnNarrow: true },
  {
    id: "origin",
    header: "Origin",
    cell: (c) => (
      <span className="badge-list">
        <Badge tone={c.origin === "added" ? "info" : "neutral"}>{c.origin}</Badge>
        {c.has_estimates ? <Badge tone="warning">estimates</Badge> : null}
      </span>
    ),
  },
];

/** The price catalogs the planner knows; admins add one from a YAML or JSON file. */
export function CatalogsCard({ isAdmin }: { isAdmin: boolean }) {
  const catalogs = useQuery(catalogsQueryOptions());
  const upload = useUploadCatalog();
  const input = useRef<HTMLInputElement>(null);
  return (
    <Card
      title="Price catalogs"
      description="One per provider, region and date; figures marked as estimates are not from a price list."
      className="print-hide"
      padded={false}
      actions={
        isAdmin ? (
          <>
            <input
              ref={input}
              type="file"
              accept=".yaml,.yml,.json,application/json,application/yaml"
              className="visually-hidden"
              aria-label="Catalog file"
              onChange={(e) => {
                const file = e.target.files?.[0];
                if (file) upload.mutate(file, { onSettled: () => (e.target.value = "") });
              }}
            />
            <Button size="sm" loading={upload.isPending} onClick={() => input.current?.click()}>
              Add a catalog…
            </Button>
          </>
        ) : null
      }
    >
      {upload.isError ? (
        <div className="card-inset">
          <ErrorBanner title="The catalog was not added" error={upload.error} />
        </div>
      ) : null}
      {upload.isSuccess ? (
        <p className="card-inset" role="status">
          Added {upload.data.id}.
        </p>
      ) : null}
      <QueryState
        query={catalogs}
        loading="Loading price catalogs…"
        errorTitle="Could not load price catalogs"
        inset
      >
        {(data) => <Table caption="Price catalogs" columns={columns} rows={data} rowKey={(c) => c.id} />}
      </QueryState>
    </Card>
  );
}
