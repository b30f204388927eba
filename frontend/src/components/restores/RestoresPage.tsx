import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import type { Scope, Selection } from "@/api/restores";
import { Button, PageHeader } from "@/components/ui";
import { BatchDetail } from "./BatchDetail";
import { NotificationsCard } from "./NotificationsCard";
import { ObjectPicker } from "./ObjectPicker";
import { RestoreDialog } from "./RestoreDialog";
import { RestoreQueue } from "./RestoreQueue";
import "./restores.css";

/** The Restores page: the queue (own, or everyone's for admins) or one batch's detail. */
export function RestoresPage({ batch, scope, isAdmin }: { batch?: number; scope: Scope; isAdmin: boolean }) {
  const navigate = useNavigate({ from: "/restores" });
  const [picking, setPicking] = useState(false);
  const [selection, setSelection] = useState<Selection | null>(null);
  const everyone = isAdmin && scope === "everyone";

  if (batch) return <BatchDetail id={batch} scope={everyone ? "everyone" : "mine"} />;
  return (
    <>
      <PageHeader
        title="Restores"
        description={
          everyone
            ? "Every user's restore batches: the whole queue, by state and tier."
            : "Your restore batches of archived objects, until every object is readable."
        }
        actions={
          <div className="row">
            {isAdmin ? (
              <fieldset className="restore-scope" aria-label="Whose restores">
                <Button
                  size="sm"
                  variant={everyone ? "ghost" : "secondary"}
                  aria-pressed={!everyone}
                  onClick={() => navigate({ search: { scope: undefined } })}
                >
                  Mine
                </Button>
                <Button
                  size="sm"
                  variant={everyone ? "secondary" : "ghost"}
                  aria-pressed={everyone}
                  onClick={() => navigate({ search: { scope: "everyone" } })}
                >
                  Everyone
                </Button>
              </fieldset>
            ) : null}
            <Button variant="primary" onClick={() => setPicking(true)}>
              New restore
            </Button>
          </div>
        }
      />
      <div className="stack-lg">
        <RestoreQueue scope={everyone ? "everyone" : "mine"} />
        <NotificationsCard />
      </div>
      <ObjectPicker
        open={picking}
        onClose={() => setPicking(false)}
        onPicked={(picked) => {
          setPicking(false);
          setSelection(picked);
        }}
      />
      {selection ? (
        <RestoreDialog
          open
          selection={selection}
          onClose={() => setSelection(null)}
          onCreated={(created) =>
            navigate({ search: { batch: created.id, scope: everyone ? "everyone" : undefined } })
          }
        />
      ) : null}
    </>
  );
}
