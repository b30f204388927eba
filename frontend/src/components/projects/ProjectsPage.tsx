import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { type Project, projectsQueryOptions } from "@/api/projects";
import { Button, EmptyState, PageHeader, QueryState } from "@/components/ui";
import { ProjectCard } from "./ProjectCard";
import { AddMemberDialog, CreateProjectDialog, QuotaDialog } from "./ProjectDialogs";
import { canManage } from "./project-form";

/** The caller's projects (an admin's: all) with their members, roles and use against quota. */
export function ProjectsPage({ user }: { user: { username: string; is_admin: boolean } }) {
  const projects = useQuery(projectsQueryOptions());
  const [creating, setCreating] = useState(false);
  const [adding, setAdding] = useState<Project | null>(null);
  const [quota, setQuota] = useState<Project | null>(null);
  return (
    <>
      <PageHeader
        title="Projects"
        description="Buckets grouped under one quota; members reach a project's buckets by their role (viewer, member, manager)."
        actions={
          user.is_admin ? (
            <Button variant="primary" onClick={() => setCreating(true)}>
              New project
            </Button>
          ) : undefined
        }
      />
      <QueryState
        query={projects}
        loading="Loading projects…"
        isEmpty={(data) => data.length === 0}
        empty={<EmptyState title="No projects" description="You are not a member of any project yet." />}
      >
        {(data) => (
          <div className="stack">
            {data.map((p) => (
              <ProjectCard
                key={p.name}
                project={p}
                manage={canManage(p, user)}
                onAddMember={() => setAdding(p)}
                onQuota={() => setQuota(p)}
              />
            ))}
          </div>
        )}
      </QueryState>
      <CreateProjectDialog open={creating} onClose={() => setCreating(false)} />
      <AddMemberDialog project={adding} onClose={() => setAdding(null)} />
      <QuotaDialog project={quota} onClose={() => setQuota(null)} />
    </>
  );
}
