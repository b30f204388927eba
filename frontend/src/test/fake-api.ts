// A stand-in for the tierpilot API inside Vitest: routes answer JSON, every request is recorded.
import { vi } from "vitest";

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: unknown;
}

type Handler = (req: RecordedRequest) => { status?: number; body?: unknown } | undefined;

export function installFakeApi(routes: Record<string, Handler>) {
  const requests: RecordedRequest[] = [];
  const fetchMock = vi.fn(async (input: Request | string, init?: RequestInit) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const url = new URL(request.url);
    const text = await request.text();
    const recorded: RecordedRequest = {
      method: request.method,
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers,
      body: text ? JSON.parse(text) : undefined,
    };
    requests.push(recorded);
    const handler = routes[`${request.method} ${url.pathname}`];
    const answer = handler ? handler(recorded) : { status: 404, body: { detail: "not found" } };
    const status = answer?.status ?? 200;
    if (status === 204) return new Response(null, { status });
    return new Response(JSON.stringify(answer?.body ?? null), {
      status,
      headers: { "content-type": "application/json" },
    });
  });
  vi.stubGlobal("fetch", fetchMock);
  return { requests, fetchMock };
}
