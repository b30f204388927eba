import { keepPreviousData, queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type Reservation = Schemas["ReservationOut"];
export type ReservationIn = Schemas["ReservationIn"];
export type ReservationState = Reservation["state"];
export type Direction = Reservation["direction"];
export type Capacity = Schemas["CapacityOut"];
export type CapacityIn = Schemas["CapacityIn"];
export type Availability = Schemas["AvailabilityOut"];
export type Timeline = Schemas["TimelineOut"];
export type DirectionLoad = Schemas["DirectionLoadOut"];
export type Throughput = Schemas["ThroughputOut"];

export interface AvailabilityQuery {
  direction: Direction;
  start: string;
  end: string;
  rate_mbps?: number;
}

export const reservationKeys = {
  all: ["reservations"] as const,
  lists: () => [...reservationKeys.all, "list"] as const,
  list: (states: ReservationState[]) => [...reservationKeys.lists(), { states }] as const,
  detail: (id: string) => [...reservationKeys.all, "detail", id] as const,
  throughput: (id: string) => [...reservationKeys.all, "throughput", id] as const,
  availability: (q: AvailabilityQuery) => [...reservationKeys.all, "availability", q] as const,
  timeline: (start: string, end: string) => [...reservationKeys.all, "timeline", { start, end }] as const,
  capacity: () => ["capacity"] as const,
};

export const reservationsQueryOptions = (states: ReservationState[] = []) =>
  queryOptions({
    queryKey: reservationKeys.list(states),
    queryFn: () =>
      unwrap(
        api.GET("/api/reservations", { params: { query: { state: states.length ? states : undefined } } }),
      ),
    // states follow the clock (booked turns active at its start): refresh now and then
    refetchInterval: 30_000,
  });

export const reservationQueryOptions = (id: string) =>
  queryOptions({
    queryKey: reservationKeys.detail(id),
    queryFn: () =>
      unwrap(api.GET("/api/reservations/{reservation_id}", { params: { path: { reservation_id: id } } })),
  });

export const throughputQueryOptions = (id: string, live: boolean) =>
  queryOptions({
    queryKey: reservationKeys.throughput(id),
    queryFn: () =>
      unwrap(
        api.GET("/api/reservations/{reservation_id}/throughput", {
          params: { path: { reservation_id: id } },
        }),
      ),
    // the worker rolls metering up every few seconds: follow it while the reservation is active
    refetchInterval: live ? 5_000 : false,
  });

export const availabilityQueryOptions = (q: AvailabilityQuery) =>
  queryOptions({
    queryKey: reservationKeys.availability(q),
    queryFn: () => unwrap(api.GET("/api/reservations/availability", { params: { query: q } })),
    // keep showing the last answer while the next one (for the edited form) loads
    placeholderData: keepPreviousData,
    staleTime: 5_000,
  });

export const timelineQueryOptions = (start: string, end: string) =>
  queryOptions({
    queryKey: reservationKeys.timeline(start, end),
    queryFn: () => unwrap(api.GET("/api/reservations/timeline", { params: { query: { start, end } } })),
    placeholderData: keepPreviousData,
    refetchInterval: 60_000,
  });

export const capacityQueryOptions = () =>
  queryOptions({
    queryKey: reservationKeys.capacity(),
    queryFn: () => unwrap(api.GET("/api/capacity")),
  });

/** Booking or cancelling changes lists, timeline and availability: refresh all of them. */
function useInvalidateReservations() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: reservationKeys.all });
}

export function useBookReservation() {
  const invalidate = useInvalidateReservations();
  return useMutation({
    mutationFn: (body: ReservationIn) => unwrap(api.POST("/api/reservations", { body })),
    onSuccess: invalidate,
  });
}

export function useCancelReservation() {
  const invalidate = useInvalidateReservations();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE("/api/reservations/{reservation_id}", { params: { path: { reservation_id: id } } })),
    onSuccess: invalidate,
  });
}

export function useSetCapacity() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: CapacityIn) => unwrap(api.PUT("/api/capacity", { body })),
    onSuccess: (data) => {
      queryClient.setQueryData(reservationKeys.capacity(), data);
      return queryClient.invalidateQueries({ queryKey: reservationKeys.all });
    },
  });
}

/** The body of a 409 from booking: the largest rate that fits and the earliest window that would. */
export interface BookingConflict {
  detail: string;
  max_rate_mbps: number;
  earliest_start: string | null;
}

export function isBookingConflict(body: unknown): body is BookingConflict {
  return !!body && typeof body === "object" && "max_rate_mbps" in body;
}
