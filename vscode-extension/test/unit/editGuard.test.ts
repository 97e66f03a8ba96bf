import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { editOrigin, staleEditReason } from "../../src/editGuard";

describe("editOrigin", () => {
  it("reads the uri and version the server put in a code action's data", () => {
    const data = { uri: "file:///k.argus", version: 7, edits: [[1, 2, 1, 4, "f32"]], skill: "x" };
    assert.deepEqual(editOrigin(data), { uri: "file:///k.argus", version: 7 });
  });

  it("finds none in data without them or of the wrong types", () => {
    for (const data of [undefined, null, 3, { skill: "x" }, { uri: "file:///k", version: "7" }, { uri: 1, version: 7 }, { uri: "f", version: 1.5 }]) {
      assert.equal(editOrigin(data), undefined, JSON.stringify(data));
    }
  });
});

describe("staleEditReason", () => {
  const origin = { uri: "file:///k.argus", version: 7 };

  it("lets an edit made for the document's current version through", () => {
    assert.equal(staleEditReason(origin, 7), undefined);
  });

  it("stops an edit made for another version, saying both", () => {
    assert.match(staleEditReason(origin, 8) ?? "", /version 7, the document is at 8/);
  });

  it("stops an edit for a document that is not open", () => {
    assert.equal(staleEditReason(origin, undefined), "the document is not open");
  });
});
