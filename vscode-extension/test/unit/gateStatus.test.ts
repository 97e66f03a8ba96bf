import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { gatePassed, gateResultsIn, summarizeGateResponse, type StageStatus } from "../../src/gateStatus";

const stage = (status: StageStatus, extra: Record<string, unknown> = {}) => ({ status, seconds: 1.25, message: "", facts: null, ...extra });

const passedOnGpu = {
  format: "argus-gate/1",
  kernel: "matmul",
  device: "NVIDIA H200",
  compile: stage("passed"),
  correct: stage("passed"),
  profile: stage("passed", { facts: { kernel: { ms_median: 0.2134 }, tflops: 655.2 } }),
  errors: [],
  seconds: 9.5,
};
const wrongOnCpu = {
  kernel: "matmul_bugs",
  device: "cpu",
  compile: stage("passed"),
  correct: stage("failed", { message: "C differs at [0, 3]: got 1.0, expected 2.0" }),
  profile: stage("skipped", { message: "no GPU" }),
  errors: [{ code: "AR503", message: "output C is wrong", stage: "correct", line: 18 }],
};

describe("gateResultsIn", () => {
  it("finds the results in the runGate response, a GateRun or one GateResult", () => {
    assert.equal(gateResultsIn({ uri: "file:///a", kernels: ["matmul"], results: [passedOnGpu] }).length, 1);
    assert.equal(gateResultsIn({ format: "argus-gate/1", results: [passedOnGpu, wrongOnCpu] }).length, 2);
    assert.equal(gateResultsIn(passedOnGpu)[0].kernel, "matmul");
  });

  it("finds nothing in an unrelated value", () => {
    assert.deepEqual(gateResultsIn({ kernel: "x" }), []);
    assert.deepEqual(gateResultsIn(null), []);
    assert.deepEqual(gateResultsIn("passed"), []);
  });
});

describe("gatePassed", () => {
  it("needs every stage that ran to pass, no errors, and one stage run", () => {
    assert.equal(gatePassed(passedOnGpu), true);
    assert.equal(gatePassed(wrongOnCpu), false);
    assert.equal(gatePassed({ kernel: "k", compile: stage("skipped"), correct: stage("skipped") }), false);
    assert.equal(gatePassed({ ...passedOnGpu, errors: [{ code: "AR501", message: "m" }] }), false);
  });
});

describe("summarizeGateResponse", () => {
  it("shows a pass with its stages and the profiled time", () => {
    const summary = summarizeGateResponse({ kernels: ["matmul"], cancelled: false, error: null, results: [passedOnGpu] });
    assert.ok(summary);
    assert.equal(summary.text, "$(pass) gate matmul: ✓ compile ✓ correct ✓ profile · 0.21 ms 655 TFLOP/s");
    assert.equal(summary.passed, true);
    assert.match(summary.tooltip, /matmul on NVIDIA H200: passed/);
  });

  it("shows the first stage that failed, and the reason in the tooltip", () => {
    const summary = summarizeGateResponse({ kernels: ["matmul_bugs"], results: [wrongOnCpu] });
    assert.ok(summary);
    assert.equal(summary.text, "$(error) gate matmul_bugs: correct failed");
    assert.equal(summary.passed, false);
    assert.match(summary.tooltip, /✗ correct failed \(1.3 s\): C differs at \[0, 3\]/);
    assert.match(summary.tooltip, /– profile skipped: no GPU/);
    assert.match(summary.tooltip, /AR503 line 18: output C is wrong/);
  });

  it("puts a failing kernel first when several ran", () => {
    const summary = summarizeGateResponse({ results: [passedOnGpu, wrongOnCpu] });
    assert.equal(summary?.text, "$(error) gate matmul_bugs: correct failed (+1)");
  });

  it("says when the server refused to run the gate", () => {
    const summary = summarizeGateResponse({ kernels: ["matmul_bugs"], error: "fix the errors first: the gate runs only kernels that check", results: [] });
    assert.equal(summary?.text, "$(warning) gate matmul_bugs: not run");
    assert.equal(summary?.tooltip, "fix the errors first: the gate runs only kernels that check");
  });

  it("says when the run was cancelled", () => {
    assert.equal(summarizeGateResponse({ kernels: ["k"], cancelled: true, results: [] })?.text, "$(circle-slash) gate k: cancelled");
  });

  it("shows microseconds for a fast kernel", () => {
    const fast = { ...passedOnGpu, profile: stage("passed", { facts: { kernel: { ms_median: 0.0123 } } }) };
    assert.match(summarizeGateResponse({ results: [fast] })?.text ?? "", /· 12\.3 µs$/);
  });

  it("gives nothing to show for an empty answer", () => {
    assert.equal(summarizeGateResponse({ results: [] }), undefined);
  });
});
