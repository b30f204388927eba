import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type UserCreateInput = Schemas["UserCreate"];
export type UserCreated = Schemas["UserCreatedOut"];
export type UserUpdateInput = Schemas["UserUpdate"];

export const userKeys = {
  all: ["users"] as const,
  lists: () => [...userKeys.all, "list"] as const,
  list: () => [...userKeys.lists()] as const,
};

export const usersQueryOptions = () =>
  queryOptions({
    queryKey: userKeys.list(),
    queryFn: () => unwrap(api.GET("/api/users")),
  });

function useInvalidateUsers() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: userKeys.lists() });
}

export function useCreateUser() {
  const invalidate = useInvalidateUsers();
  return useMutation({
    mutationFn: (body: UserCreateInput) => unwrap(api.POST("/api/users", { body })),
    onSuccess: invalidate,
  });
}

/** Disable or enable a user, or change the role (admins; takes effect on the user's next request). */
export function useUpdateUser() {
  const invalidate = useInvalidateUsers();
  return useMutation({
    mutationFn: ({ userId, body }: { userId: number; body: UserUpdateInput }) =>
      unwrap(api.PATCH("/api/users/{user_id}", { params: { path: { user_id: userId } }, body })),
    onSuccess: invalidate,
  });
}

/** Set another user's password (admins); their sessions end. */
export function useResetPassword() {
  return useMutation({
    mutationFn: ({ userId, password }: { userId: number; password: string }) =>
      unwrap(
        api.POST("/api/users/{user_id}/password", {
          params: { path: { user_id: userId } },
          body: { new_password: password },
        }),
      ),
  });
}

/** Delete a user (admins); the server refuses (409) while they own buckets or uploads. */
export function useDeleteUser() {
  const invalidate = useInvalidateUsers();
  return useMutation({
    mutationFn: (userId: number) =>
      unwrap(api.DELETE("/api/users/{user_id}", { params: { path: { user_id: userId } } })),
    onSuccess: invalidate,
  });
}
