import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type Notification = Schemas["NotificationOut"];
export type Notifications = Schemas["NotificationsOut"];
export type Webhook = Schemas["WebhookOut"];

export const notificationKeys = {
  all: ["notifications"] as const,
  list: (unread: boolean) => [...notificationKeys.all, "list", { unread }] as const,
  webhook: () => [...notificationKeys.all, "webhook"] as const,
};

export const notificationsQueryOptions = (unread = false) =>
  queryOptions({
    queryKey: notificationKeys.list(unread),
    queryFn: () => unwrap(api.GET("/api/notifications", { params: { query: { unread } } })),
    // a finished restore batch shows up without a reload
    refetchInterval: 15_000,
  });

export const webhookQueryOptions = () =>
  queryOptions({
    queryKey: notificationKeys.webhook(),
    queryFn: () => unwrap(api.GET("/api/notifications/webhook")),
  });

export function useMarkRead() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (ids: number[] | null) => unwrap(api.POST("/api/notifications/read", { body: { ids } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: notificationKeys.all }),
  });
}

export function useSetWebhook() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (url: string) => unwrap(api.PUT("/api/notifications/webhook", { body: { url } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: notificationKeys.webhook() }),
  });
}

/** Replaces the signing secret; the answer carries the new secret, the only time it is shown. */
export function useRotateWebhookSecret() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST("/api/notifications/webhook/secret/rotate")),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: notificationKeys.webhook() }),
  });
}
