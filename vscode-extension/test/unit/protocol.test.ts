import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { commandsToRegisterFromServer } from "../../src/protocol";

describe("commandsToRegisterFromServer", () => {
  it("leaves out the commands the extension registers itself", () => {
    assert.deepEqual(commandsToRegisterFromServer(["argus.runGate", "argus.cancelGate", "argus.settings", "argus.refine"]), [
      "argus.cancelGate",
      "argus.settings",
    ]);
  });

  it("accepts a server without commands", () => {
    assert.deepEqual(commandsToRegisterFromServer(undefined), []);
  });
});
