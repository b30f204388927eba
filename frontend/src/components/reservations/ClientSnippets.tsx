import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { overviewQueryOptions } from "@/api/overview";
import type { Reservation } from "@/api/reservations";
import { Button, CopyButton, CopyField } from "@/components/ui";
import { clientSnippets } from "./snippets";
import "./reservations.css";

/** The reservation id and commands that send it, each with a copy button. */
export function ClientSnippets({ reservation }: { reservation: Reservation }) {
  const overview = useQuery(overviewQueryOptions());
  const gateway = overview.data?.gateway_url ?? window.location.origin.replace(/:\d+$/, ":9000");
  const snippets = clientSnippets(reservation, gateway);
  const [shown, setShown] = useState(snippets[0]?.id ?? "boto3");
  const current = snippets.find((s) => s.id === shown) ?? snippets[0];
  return (
    <div className="res-snippets">
      <CopyField label="Reservation id (request header X-Tierpilot-Reservation)" value={reservation.id} />
      <div className="res-snippets__tabs" role="tablist" aria-label="Client">
        {snippets.map((s) => (
          <Button
            key={s.id}
            size="sm"
            role="tab"
            aria-selected={s.id === shown}
            variant={s.id === shown ? "primary" : "secondary"}
            onClick={() => setShown(s.id)}
          >
            {s.id}
          </Button>
        ))}
      </div>
      {current ? (
        <div role="tabpanel" aria-label={current.title} className="res-snippet">
          <div className="res-snippet__head">
            <span className="muted">{current.title}</span>
            <CopyButton value={current.code} accessibleLabel={`Copy the ${current.id} snippet`} />
          </div>
          <pre className="snippet">
            <code>{current.code}</code>
          </pre>
        </div>
      ) : null}
    </div>
  );
}
