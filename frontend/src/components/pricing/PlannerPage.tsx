import { useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import {
  catalogsQueryOptions,
  downloadReportCsv,
  fetchFromMyData,
  installationTiersQueryOptions,
  reportQueryOptions,
  type SavedScenario,
  type ScenarioBody,
  scenarioQueryOptions,
  scenariosQueryOptions,
  sharedScenarioQueryOptions,
} from "@/api/pricing";
import { Button, Card, ErrorBanner, PageHeader, QueryState } from "@/components/ui";
import { CatalogsCard } from "./CatalogsCard";
import { CompareScenarios } from "./CompareScenarios";
import { tierColors } from "./chart-data";
import { PrintSummary } from "./PrintSummary";
import { SaveAsPlanDialog } from "./SaveAsPlanDialog";
import { ScenarioForm } from "./ScenarioForm";
import { ScenarioLibrary } from "./ScenarioLibrary";
import {
  DEFAULT_FORM,
  type FormState,
  fromScenario,
  installationStart,
  prefilledForm,
  toScenario,
} from "./scenario-form";
import "./pricing.css";
import { useSettled } from "@/lib/useSettled";
import { PlannerReport } from "./PlannerReport";

const TYPING_PAUSE_MS = 300;

export interface PlannerPageProps {
  /** A saved scenario of the user's to open (`?scenario=ID`). */
  scenarioId?: number | undefined;
  /** A scenario shared by link (`?shared=TOKEN`). */
  sharedToken?: string | undefined;
  /** Admins may add price catalogs. */
  isAdmin?: boolean;
}

/** What-if cost reports: storage, requests, restores and egress per tier against access frequency. */
export function PlannerPage({ scenarioId, sharedToken, isAdmin = false }: PlannerPageProps) {
  const catalogs = useQuery(catalogsQueryOptions());
  const [form, setForm] = useState<FormState>(DEFAULT_FORM);
  const [loaded, setLoaded] = useState<{ id: number | null; name: string | null }>({ id: null, name: null });
  const [compare, setCompare] = useState<number[]>([]);
  const [actionError, setActionError] = useState<unknown>(null);
  const [prefilling, setPrefilling] = useState(false);
  const [exporting, setExporting] = useState(false);
  const [planning, setPlanning] = useState<ScenarioBody | null>(null);

  const { body, errors } = useMemo(() => toScenario(form), [form]);
  const settled = useSettled<ScenarioBody | null>(body, TYPING_PAUSE_MS);
  const report = useQuery(reportQueryOptions(settled));
  const saved = useQuery(scenariosQueryOptions());
  const shared = useQuery({
    ...sharedScenarioQueryOptions(sharedToken ?? ""),
    enabled: Boolean(sharedToken),
  });
  const opened = useQuery({ ...scenarioQueryOptions(scenarioId ?? 0), enabled: scenarioId !== undefined });
  const mine = useQuery(installationTiersQueryOptions());
  // a new planner opens on this installation's tiers and the current catalog, once, until the user edits
  const [started, setStarted] = useState(false);
  useEffect(() => {
    if (started || scenarioId !== undefined || sharedToken || !mine.data || !catalogs.data) return;
    setStarted(true);
    setForm((current) =>
      current === DEFAULT_FORM ? installationStart(current, mine.data, catalogs.data) : current,
    );
  }, [started, scenarioId, sharedToken, mine.data, catalogs.data]);

  const open = (s: SavedScenario, own: boolean) => {
    setForm(fromScenario(s.body as Partial<ScenarioBody>));
    setLoaded({ id: own ? s.id : null, name: s.name });
  };
  // a link (?shared= or ?scenario=) opens that scenario once it has loaded
  useEffect(() => {
    if (!shared.data) return;
    setForm(fromScenario(shared.data.body as Partial<ScenarioBody>));
    setLoaded({ id: null, name: shared.data.name });
  }, [shared.data]);
  useEffect(() => {
    if (!opened.data) return;
    setForm(fromScenario(opened.data.body as Partial<ScenarioBody>));
    setLoaded({ id: opened.data.id, name: opened.data.name });
  }, [opened.data]);

  const prefill = async () => {
    setPrefilling(true);
    setActionError(null);
    try {
      const out = await fetchFromMyData(form.catalog);
      setForm((current) => prefilledForm(current, out.scenario as Partial<ScenarioBody>));
      setLoaded({ id: null, name: null });
    } catch (error) {
      setActionError(error);
    } finally {
      setPrefilling(false);
    }
  };
  const exportCsv = async () => {
    if (!body) return;
    setExporting(true);
    setActionError(null);
    try {
      await downloadReportCsv(body, loaded.name ?? "cost-report");
    } catch (error) {
      setActionError(error);
    } finally {
      setExporting(false);
    }
  };

  const data = report.data;
  const colors = tierColors(data ? data.tiers.map((t) => t.tier) : form.tiers);
  const comparing = (saved.data ?? []).filter((s) => compare.includes(s.id));
  return (
    <>
      <PageHeader
        title="Cost planner"
        description="What each tier costs at the access frequency you expect, and where the lines cross. Money in USD; volumes in binary units (1 GiB = 2^30 bytes), as cloud bills count them."
        actions={
          <>
            <Button onClick={prefill} loading={prefilling}>
              From my data
            </Button>
            <Button onClick={exportCsv} loading={exporting} disabled={!body}>
              Export CSV
            </Button>
            <Button onClick={() => setPlanning(body)} disabled={!body}>
              Save as bucket plan…
            </Button>
            <Button onClick={() => window.print()} disabled={!data}>
              Print
            </Button>
          </>
        }
      />
      {shared.isError ? (
        <ErrorBanner title="Could not open the shared scenario" error={shared.error} />
      ) : null}
      {opened.isError ? <ErrorBanner title="Could not open the scenario" error={opened.error} /> : null}
      {actionError ? <ErrorBanner title="That did not work" error={actionError} /> : null}
      {data ? <PrintSummary report={data} name={loaded.name} /> : null}
      <div className="planner-layout">
        <aside className="planner-inputs print-hide">
          <Card
            title="What if"
            description={loaded.name ? `Scenario “${loaded.name}”` : "Type to update the report."}
          >
            <QueryState
              query={catalogs}
              loading="Loading price catalogs…"
              errorTitle="Could not load price catalogs"
            >
              {(list) => <ScenarioForm form={form} errors={errors} catalogs={list} onChange={setForm} />}
            </QueryState>
          </Card>
        </aside>
        <div className="planner-results" aria-live="polite" aria-busy={report.isFetching || undefined}>
          {!body && !data ? (
            <p className="muted">Fix the marked fields to see the report.</p>
          ) : (
            <QueryState
              query={report}
              loading="Pricing the scenario…"
              errorTitle="The scenario cannot be priced"
              retry={false}
            >
              {(priced) => (
                <PlannerReport
                  report={priced}
                  colors={colors}
                  updating={report.isFetching}
                  catalogs={catalogs.data ?? []}
                />
              )}
            </QueryState>
          )}
        </div>
      </div>
      <ScenarioLibrary
        current={body}
        loadedId={loaded.id}
        onLoad={(s) => open(s, true)}
        onSaved={(s) => setLoaded({ id: s.id, name: s.name })}
        compare={compare}
        onCompareChange={setCompare}
      />
      {comparing.length >= 2 ? <CompareScenarios scenarios={comparing} /> : null}
      <CatalogsCard isAdmin={isAdmin} />
      {planning ? (
        <SaveAsPlanDialog scenario={planning} isAdmin={isAdmin} onClose={() => setPlanning(null)} />
      ) : null}
    </>
  );
}
