import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { GateBoard, gateResponseUri } from "../../src/gateBoard";
import { cancelledSummary, type GateSummary } from "../../src/gateStatus";

const A = "file:///ws/vector_add.argus";
const B = "file:///ws/matmul.argus";
const passed: GateSummary = { text: "$(pass) gate vector_add: ✓ compile ✓ correct", tooltip: "vector_add: passed", passed: true };
const failed: GateSummary = { text: "$(error) gate matmul: correct failed", tooltip: "matmul: not passed", passed: false };

describe("GateBoard", () => {
  it("shows a document's own result only, not another file's", () => {
    const board = new GateBoard();
    board.finished(A, passed);
    assert.deepEqual(board.stateOf(A), { summary: passed });
    assert.deepEqual(board.stateOf(B), {}, "B was never gated: nothing to show there");
    board.finished(B, failed);
    assert.equal(board.stateOf(A).summary, passed);
    assert.equal(board.stateOf(B).summary, failed);
  });

  it("shows nothing when no document is active", () => {
    const board = new GateBoard();
    board.finished(A, passed);
    assert.deepEqual(board.stateOf(undefined), {});
  });

  it("shows a run going for its document, then its result; a run ending with nothing keeps the last result", () => {
    const board = new GateBoard();
    board.finished(A, passed);
    board.started(A, "gate vector_add");
    assert.deepEqual(board.stateOf(A), { running: "gate vector_add", summary: passed });
    assert.deepEqual(board.stateOf(B), {});
    board.finished(A, undefined);
    assert.deepEqual(board.stateOf(A), { summary: passed });
    const cancelled = cancelledSummary("gate vector_add", "The language server was restarted during the run.");
    board.started(A, "gate vector_add");
    board.finished(A, cancelled);
    assert.deepEqual(board.stateOf(A), { summary: cancelled });
    assert.equal(cancelled.text, "$(circle-slash) gate vector_add: cancelled");
  });

  it("forgets a closed document", () => {
    const board = new GateBoard();
    board.finished(A, passed);
    board.forget(A);
    assert.deepEqual(board.stateOf(A), {});
  });
});

describe("gateResponseUri", () => {
  it("reads the document of an argus/gateResult notification or a runGate answer", () => {
    assert.equal(gateResponseUri({ uri: A, version: 3, kernels: ["vector_add"], results: [] }), A);
    assert.equal(gateResponseUri({ error: "x is not open" }), undefined);
    assert.equal(gateResponseUri(null), undefined);
  });
});
