import { createFileRoute } from "@tanstack/react-router";
import { SpendPage } from "@/components/spend/SpendPage";

export const Route = createFileRoute("/_app/spend")({
  component: SpendPage,
});
