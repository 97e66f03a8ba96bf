// A gate result (server/argus/gate/result.py, format argus-gate/1) as status bar text and tooltip. No
// `vscode` import.

export type StageStatus = "passed" | "failed" | "skipped" | "error";
const STAGES = ["compile", "correct", "profile"] as const;
type StageName = (typeof STAGES)[number];

interface StageResult {
  status: StageStatus;
  seconds?: number;
  message?: string;
  facts?: Record<string, unknown> | null;
}

export interface GateResult {
  kernel: string;
  device?: string;
  compile?: StageResult;
  correct?: StageResult;
  profile?: StageResult;
  errors?: { code: string; message: string; stage?: string | null; line?: number | null }[];
  seconds?: number;
}

export interface GateSummary {
  /** Status bar text, with a codicon. */
  text: string;
  /** Markdown-free multi-line tooltip. */
  tooltip: string;
  passed: boolean;
}

const MARK: Record<StageStatus, string> = { passed: "✓", failed: "✗", error: "!", skipped: "–" };

/** The gate results inside a server response: one GateResult, a GateRun (`{results: [...]}`), or a list. */
export function gateResultsIn(response: unknown): GateResult[] {
  if (Array.isArray(response)) {
    return response.flatMap(gateResultsIn);
  }
  if (!isObject(response)) {
    return [];
  }
  if (Array.isArray(response.results)) {
    return response.results.flatMap(gateResultsIn);
  }
  if (isObject(response.result)) {
    return gateResultsIn(response.result);
  }
  if (typeof response.kernel === "string" && STAGES.some((s) => isObject(response[s]))) {
    return [response as unknown as GateResult];
  }
  return [];
}

export function gatePassed(result: GateResult): boolean {
  const ran = STAGES.map((s) => result[s]).filter((s): s is StageResult => s !== undefined && s.status !== "skipped");
  return ran.length > 0 && ran.every((s) => s.status === "passed") && (result.errors ?? []).length === 0;
}

/**
 * The status bar for the response of `argus.runGate` (server/argus/lsp/gate.py: {kernels, cancelled, error,
 * results}); undefined when the response holds nothing to show.
 */
export function summarizeGateResponse(response: unknown): GateSummary | undefined {
  if (isObject(response)) {
    const kernels = Array.isArray(response.kernels) ? response.kernels.filter((k) => typeof k === "string").join(", ") : "";
    const label = kernels ? `gate ${kernels}` : "gate";
    if (response.cancelled === true) {
      return cancelledSummary(label, "The gate run was cancelled.");
    }
    if (typeof response.error === "string" && response.error.length > 0) {
      return { text: `$(warning) ${label}: not run`, tooltip: response.error, passed: false };
    }
  }
  return summarizeGate(gateResultsIn(response));
}

/** A run that ended without a result: cancelled, for the reason `why` (the tooltip). */
export function cancelledSummary(label: string, why: string): GateSummary {
  return { text: `$(circle-slash) ${label}: cancelled`, tooltip: why, passed: false };
}

export function summarizeGate(results: GateResult[]): GateSummary | undefined {
  if (results.length === 0) {
    return undefined;
  }
  const failing = results.filter((r) => !gatePassed(r));
  const shown = failing[0] ?? results[0];
  const more = results.length > 1 ? ` (+${results.length - 1})` : "";
  let text: string;
  if (failing.length === 0) {
    const timing = kernelTiming(shown);
    text = `$(pass) gate ${shown.kernel}: ${stageMarks(shown)}${timing ? ` · ${timing}` : ""}${more}`;
  } else {
    text = `$(error) gate ${shown.kernel}: ${firstProblem(shown)}${more}`;
  }
  return { text, tooltip: results.map(describe).join("\n\n"), passed: failing.length === 0 };
}

function stageMarks(result: GateResult): string {
  return STAGES.filter((s) => result[s] !== undefined && result[s]!.status !== "skipped")
    .map((s) => `${MARK[result[s]!.status]} ${s}`)
    .join(" ");
}

function firstProblem(result: GateResult): string {
  const stage = STAGES.find((s) => result[s]?.status === "failed" || result[s]?.status === "error");
  if (stage !== undefined) {
    return `${stage} ${result[stage]!.status}`;
  }
  const error = (result.errors ?? [])[0];
  if (error !== undefined) {
    return `${error.code}`;
  }
  return "nothing ran";
}

function kernelTiming(result: GateResult): string | undefined {
  const facts = result.profile?.status === "passed" ? result.profile.facts : undefined;
  const kernel = isObject(facts) && isObject(facts.kernel) ? facts.kernel : undefined;
  const ms = kernel !== undefined && typeof kernel.ms_median === "number" ? kernel.ms_median : undefined;
  if (ms === undefined) {
    return undefined;
  }
  const tflops = isObject(facts) && typeof facts.tflops === "number" ? ` ${facts.tflops.toFixed(0)} TFLOP/s` : "";
  return `${formatMs(ms)}${tflops}`;
}

function formatMs(ms: number): string {
  return ms >= 100 ? `${ms.toFixed(0)} ms` : ms >= 0.1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`;
}

function describe(result: GateResult): string {
  const lines = [`${result.kernel}${result.device ? ` on ${result.device}` : ""}: ${gatePassed(result) ? "passed" : "not passed"}`];
  for (const s of STAGES) {
    const stage = result[s];
    if (stage === undefined) {
      continue;
    }
    const seconds = stage.status !== "skipped" && typeof stage.seconds === "number" ? ` (${stage.seconds.toFixed(1)} s)` : "";
    lines.push(`  ${MARK[stage.status]} ${s} ${stage.status}${seconds}${stage.message ? `: ${stage.message}` : ""}`);
  }
  for (const e of result.errors ?? []) {
    lines.push(`  ${e.code}${e.line ? ` line ${e.line}` : ""}: ${e.message}`);
  }
  return lines.join("\n");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export type { StageName };
