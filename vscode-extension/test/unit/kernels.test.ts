import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { kernelAt, kernelsIn } from "../../src/kernels";

const FILE = [
  "# two kernels", //                                  0
  "kernel add(x: f32[N], y: out f32[N]):", //          1
  "    tile B = 1024", //                              2
  "    grid cdiv(N, B)", //                            3
  "", //                                               4
  "# the second one", //                               5
  "kernel scale(x: f32[N], y: out f32[N]):", //        6
  "    tile B = 256", //                               7
  "", //                                               8
  "reference add(x):", //                              9
  "    return x", //                                   10
  "", //                                               11
  "sizes scale:", //                                   12
  "    small: N = 10", //                              13
].join("\n");

describe("kernelsIn", () => {
  it("lists the kernels with their header lines", () => {
    assert.deepEqual(kernelsIn(FILE), [
      { name: "add", line: 1 },
      { name: "scale", line: 6 },
    ]);
  });
});

describe("kernelAt", () => {
  it("names the kernel whose body holds the line", () => {
    assert.equal(kernelAt(FILE, 3), "add");
    assert.equal(kernelAt(FILE, 7), "scale");
  });

  it("names the kernel of a reference or sizes block", () => {
    assert.equal(kernelAt(FILE, 10), "add");
    assert.equal(kernelAt(FILE, 13), "scale");
  });

  it("keeps a column-0 comment inside the item above it", () => {
    assert.equal(kernelAt(FILE, 5), "add");
  });

  it("gives no answer above the first item when there is a choice", () => {
    assert.equal(kernelAt(FILE, 0), undefined);
  });

  it("gives the only kernel of a file anywhere", () => {
    assert.equal(kernelAt("# header\n\nkernel only(x: f32[N]):\n    pass\n", 0), "only");
  });

  it("handles CRLF line ends", () => {
    assert.equal(kernelAt(FILE.replaceAll("\n", "\r\n"), 7), "scale");
  });
});
