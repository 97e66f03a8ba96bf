import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { DEFAULTS, initializationOptions, needsRestart, readSettings } from "../../src/settings";

const getter = (values: Record<string, unknown>) => (key: string) => values[key];

describe("readSettings", () => {
  it("gives the defaults when nothing is set", () => {
    assert.deepEqual(readSettings(getter({})), DEFAULTS);
  });

  it("reads nested keys below argus.", () => {
    const settings = readSettings(
      getter({ "gate.device": "cpu", "gate.onSave": true, debounceMs: 40, "refine.model": "qwen2.5-coder:7b", "server.pythonPath": " /x/python " }),
    );
    assert.equal(settings.gate.device, "cpu");
    assert.equal(settings.gate.onSave, true);
    assert.equal(settings.debounceMs, 40);
    assert.equal(settings.refine.model, "qwen2.5-coder:7b");
    assert.equal(settings.server.pythonPath, "/x/python");
  });

  it("replaces an invalid value by its default and says so", () => {
    const problems: string[] = [];
    const settings = readSettings(getter({ "gate.device": "tpu", debounceMs: -1, "server.command": "argus serve" }), problems);
    assert.equal(settings.gate.device, "auto");
    assert.equal(settings.debounceMs, 150);
    assert.deepEqual(settings.server.command, []);
    assert.equal(problems.length, 3);
    assert.match(problems[0], /argus\.server\.command: "argus serve" is not valid/);
  });

  it("takes a fractional gate timeout but not a fractional debounce", () => {
    const settings = readSettings(getter({ "gate.timeoutS": 2.5, debounceMs: 2.5 }));
    assert.equal(settings.gate.timeoutS, 2.5);
    assert.equal(settings.debounceMs, 150);
  });
});

describe("initializationOptions", () => {
  it("sends the server's wire form, without the client-only server section", () => {
    const options = initializationOptions(readSettings(getter({ "gate.device": "cuda", "verify.timeoutMs": 5000, "server.pythonPath": "/p" })));
    assert.deepEqual(options, {
      debounceMs: 150,
      verify: { enabled: true, rlimit: 5_000_000, timeoutMs: 5000 },
      gate: { device: "cuda", onSave: false, timeoutS: 300 },
      refine: { planner: "search", budget: 8, device: "", model: "", host: "" },
      inlayHints: { enable: true },
      check: { maxFileKiB: 2048 },
    });
  });
});

describe("needsRestart", () => {
  it("restarts for the interpreter or the command", () => {
    assert.equal(needsRestart((s) => s === "argus.server.pythonPath"), true);
    assert.equal(needsRestart((s) => s === "argus.server.command"), true);
  });

  it("does not restart for settings the running server picks up", () => {
    assert.equal(needsRestart((s) => s === "argus.gate.device" || s === "argus.debounceMs"), false);
  });
});
