import { createFileRoute } from "@tanstack/react-router";
import { NotAvailableYet } from "@/components/layout/NotAvailableYet";

export const Route = createFileRoute("/_app/browser")({
  component: BrowserPage,
});

function BrowserPage() {
  return (
    <NotAvailableYet
      title="Browser"
      icon="browser"
      summary="Buckets, folders and objects in the catalog, on every tier."
      features={[
        "browse buckets and folders, and see each object's tier, storage class, size, checksum and restore state",
        "upload and download from the browser",
        "select archived objects and restore them in one batch",
      ]}
    />
  );
}
