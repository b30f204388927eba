import { createFileRoute } from "@tanstack/react-router";
import { BrowserPage, type BrowserSearch } from "@/components/catalog/BrowserPage";

const text = (value: unknown): string | undefined => (typeof value === "string" && value ? value : undefined);

export const Route = createFileRoute("/_app/browser")({
  validateSearch: (search: Record<string, unknown>): BrowserSearch => ({
    bucket: text(search.bucket),
    prefix: text(search.prefix),
    key: text(search.key),
  }),
  component: BrowserRoute,
});

function BrowserRoute() {
  const { bucket, prefix, key } = Route.useSearch();
  return <BrowserPage bucket={bucket} prefix={prefix} objectKey={key} />;
}
