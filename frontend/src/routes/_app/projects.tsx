import { createFileRoute } from "@tanstack/react-router";
import { ProjectsPage } from "@/components/projects/ProjectsPage";

export const Route = createFileRoute("/_app/projects")({
  component: ProjectsRoute,
});

function ProjectsRoute() {
  const { user } = Route.useRouteContext();
  return <ProjectsPage user={user} />;
}
