// The extension's settings (section `argus`), read once into a typed tree. No `vscode` import: the getter
// is passed in, so this is unit-tested without VS Code.

export type GateDevice = "auto" | "cpu" | "cuda";
export const GATE_DEVICES: readonly GateDevice[] = ["auto", "cpu", "cuda"];
export type RefinePlanner = "search" | "llm";
export const REFINE_PLANNERS: readonly RefinePlanner[] = ["search", "llm"];

export interface ServerSettings {
  /** Program and arguments that start the server; empty: `<python> -m argus serve`. */
  command: string[];
  /** Interpreter with the argus package; empty: the Python extension's, else python3. */
  pythonPath: string;
}

export interface ArgusSettings {
  server: ServerSettings;
  debounceMs: number;
  /** rlimit: z3 resource units per proof obligation (decides verdicts); timeoutMs: the wall-clock safety net's unit. */
  verify: { enabled: boolean; rlimit: number; timeoutMs: number };
  gate: { device: GateDevice; onSave: boolean; timeoutS: number };
  /** argus.refine: planner, gate runs, device ("" = gate.device), and the LLM planner's model and host. */
  refine: { planner: RefinePlanner; budget: number; device: GateDevice | ""; model: string; host: string };
  inlayHints: { enable: boolean };
  /** Files larger than this many KiB are not checked while edited (AR010). */
  check: { maxFileKiB: number };
}

export const DEFAULTS: ArgusSettings = {
  server: { command: [], pythonPath: "" },
  debounceMs: 150,
  verify: { enabled: true, rlimit: 5_000_000, timeoutMs: 1000 },
  gate: { device: "auto", onSave: false, timeoutS: 300 },
  refine: { planner: "search", budget: 8, device: "", model: "", host: "" },
  inlayHints: { enable: true },
  check: { maxFileKiB: 2048 },
};

/** Reads one key below `argus.` (e.g. "gate.device"); undefined when unset. */
export type SettingGetter = (key: string) => unknown;

/** A value that has the wrong type or is out of range is replaced by its default and reported in `problems`. */
export function readSettings(get: SettingGetter, problems: string[] = []): ArgusSettings {
  const pick = <T>(key: string, fallback: T, valid: (v: unknown) => boolean): T => {
    const value = get(key);
    if (value === undefined || value === null) {
      return fallback;
    }
    if (!valid(value)) {
      problems.push(`argus.${key}: ${JSON.stringify(value)} is not valid; using ${JSON.stringify(fallback)}`);
      return fallback;
    }
    return value as T;
  };
  const isString = (v: unknown) => typeof v === "string";
  const isBool = (v: unknown) => typeof v === "boolean";
  const intIn = (lo: number, hi: number) => (v: unknown) => Number.isInteger(v) && (v as number) >= lo && (v as number) <= hi;
  const numIn = (lo: number, hi: number) => (v: unknown) =>
    typeof v === "number" && Number.isFinite(v) && v >= lo && v <= hi;
  const isStringList = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");

  return {
    server: {
      command: pick("server.command", DEFAULTS.server.command, isStringList),
      pythonPath: pick("server.pythonPath", DEFAULTS.server.pythonPath, isString).trim(),
    },
    debounceMs: pick("debounceMs", DEFAULTS.debounceMs, intIn(0, 10_000)),
    verify: {
      enabled: pick("verify.enabled", DEFAULTS.verify.enabled, isBool),
      rlimit: pick("verify.rlimit", DEFAULTS.verify.rlimit, intIn(1, 4_294_967_295)),
      timeoutMs: pick("verify.timeoutMs", DEFAULTS.verify.timeoutMs, intIn(1, 600_000)),
    },
    gate: {
      device: pick("gate.device", DEFAULTS.gate.device, (v) => GATE_DEVICES.includes(v as GateDevice)),
      onSave: pick("gate.onSave", DEFAULTS.gate.onSave, isBool),
      timeoutS: pick("gate.timeoutS", DEFAULTS.gate.timeoutS, numIn(1, 3600)),
    },
    refine: {
      planner: pick("refine.planner", DEFAULTS.refine.planner, (v) => REFINE_PLANNERS.includes(v as RefinePlanner)),
      budget: pick("refine.budget", DEFAULTS.refine.budget, intIn(0, 1000)),
      device: pick("refine.device", DEFAULTS.refine.device, (v) => v === "" || GATE_DEVICES.includes(v as GateDevice)),
      model: pick("refine.model", DEFAULTS.refine.model, isString),
      host: pick("refine.host", DEFAULTS.refine.host, isString),
    },
    inlayHints: { enable: pick("inlayHints.enable", DEFAULTS.inlayHints.enable, isBool) },
    check: { maxFileKiB: pick("check.maxFileKiB", DEFAULTS.check.maxFileKiB, intIn(1, 1_048_576)) },
  };
}

/** What the server gets as `initializationOptions`: the wire form of its settings (server/argus/lsp/settings.py). */
export function initializationOptions(settings: ArgusSettings): Record<string, unknown> {
  return {
    debounceMs: settings.debounceMs,
    verify: { ...settings.verify },
    gate: { ...settings.gate },
    refine: { ...settings.refine },
    inlayHints: { ...settings.inlayHints },
    check: { ...settings.check },
  };
}

/** Settings whose change needs a new server process; every other one reaches the running server. */
export const RESTART_SETTINGS = ["argus.server.command", "argus.server.pythonPath"] as const;

export function needsRestart(affectsConfiguration: (section: string) => boolean): boolean {
  return RESTART_SETTINGS.some((section) => affectsConfiguration(section));
}
