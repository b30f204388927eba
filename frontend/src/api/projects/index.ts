import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type Project = Schemas["ProjectOut"];
export type Member = Schemas["MemberOut"];
export type ProjectCreate = Schemas["ProjectCreate"];
export type MemberAdd = Schemas["MemberAdd"];
export type QuotaSet = Schemas["QuotaSet"];

export const ROLES = ["viewer", "member", "manager"] as const;
export type Role = (typeof ROLES)[number];

export const projectKeys = {
  all: ["projects"] as const,
  list: () => [...projectKeys.all, "list"] as const,
};

export const projectsQueryOptions = () =>
  queryOptions({
    queryKey: projectKeys.list(),
    queryFn: () => unwrap(api.GET("/api/projects")),
  });

/** Every change answers the whole project: put it in the list at once, then refetch what else moved. */
function useProjectMutation<V>(mutationFn: (vars: V) => Promise<Project>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: (project) => {
      queryClient.setQueryData(projectKeys.list(), (old: Project[] | undefined) =>
        old?.some((p) => p.name === project.name)
          ? old.map((p) => (p.name === project.name ? project : p))
          : [...(old ?? []), project],
      );
      // the buckets' listings name their project
      return queryClient.invalidateQueries({ queryKey: projectKeys.all });
    },
  });
}

const inProject = (project: string) => ({ params: { path: { project_name: project } } });
const ofMember = (project: string, username: string) => ({
  params: { path: { project_name: project, username } },
});

export const useCreateProject = () =>
  useProjectMutation((body: ProjectCreate) => unwrap(api.POST("/api/projects", { body })));

export const useAddMember = () =>
  useProjectMutation(({ project, body }: { project: string; body: MemberAdd }) =>
    unwrap(api.POST("/api/projects/{project_name}/members", { ...inProject(project), body })),
  );

export const useChangeRole = () =>
  useProjectMutation(({ project, username, role }: { project: string; username: string; role: Role }) =>
    unwrap(
      api.PATCH("/api/projects/{project_name}/members/{username}", {
        ...ofMember(project, username),
        body: { role },
      }),
    ),
  );

export const useRemoveMember = () =>
  useProjectMutation(({ project, username }: { project: string; username: string }) =>
    unwrap(api.DELETE("/api/projects/{project_name}/members/{username}", ofMember(project, username))),
  );

export const useSetQuota = () =>
  useProjectMutation(({ project, body }: { project: string; body: QuotaSet }) =>
    unwrap(api.PUT("/api/projects/{project_name}/quota", { ...inProject(project), body })),
  );
