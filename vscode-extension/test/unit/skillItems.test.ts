import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { skillItems } from "../../src/skillItems";

const KIND = "refactor.rewrite";

describe("skillItems", () => {
  const actions = [
    { title: "Retune BK = 64 → 128", kind: KIND, disabled: { reason: "needs 288 KiB of shared memory; an H200 has 227 KiB" } },
    { title: "Software pipelining: num_stages 3 → 4  (144 KiB → 192 KiB of shared memory)", kind: KIND },
    { title: "Use num_warps = 8", kind: "quickfix" },
    { title: "Retune BK = 64 → 32  (72 KiB of shared memory)", kind: KIND },
  ];

  it("lists applicable skills first, in the server's order, with their evidence as the description", () => {
    const items = skillItems(actions, KIND);
    assert.deepEqual(
      items.map((i) => [i.label, i.description, i.index]),
      [
        ["$(wrench) Software pipelining: num_stages 3 → 4", "144 KiB → 192 KiB of shared memory", 1],
        ["$(wrench) Retune BK = 64 → 32", "72 KiB of shared memory", 3],
        ["$(circle-slash) Retune BK = 64 → 128", "does not apply here", 0],
      ],
    );
  });

  it("gives a skill that does not apply the failed precondition as its detail", () => {
    const disabled = skillItems(actions, KIND).find((i) => !i.applicable);
    assert.equal(disabled?.detail, "needs 288 KiB of shared memory; an H200 has 227 KiB");
  });

  it("leaves out quick fixes", () => {
    assert.ok(skillItems(actions, KIND).every((i) => !i.label.includes("num_warps")));
  });

  it("keeps a title that has parentheses of its own", () => {
    const [item] = skillItems([{ title: "Group program order (L2 reuse)", kind: KIND }], KIND);
    assert.equal(item.label, "$(wrench) Group program order (L2 reuse)");
  });
});
