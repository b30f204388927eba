import { createFileRoute } from "@tanstack/react-router";
import { RequestsPage } from "@/components/requests/RequestsPage";

export const Route = createFileRoute("/_app/requests")({
  component: RequestsPage,
});
