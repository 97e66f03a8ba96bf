import assert from "node:assert/strict";
import { describe, it } from "node:test";

import type { ServerLaunch } from "../../src/serverCommand";
import { explainStartupProblem } from "../../src/startupProblem";

const python = (path: string, source: ServerLaunch["source"] = "argus.server.pythonPath"): ServerLaunch => ({
  command: path,
  args: ["-m", "argus", "serve"],
  source,
  python: path,
});

describe("explainStartupProblem", () => {
  it("says the interpreter is missing and which setting to change", () => {
    const problem = explainStartupProblem(python("/nope/python"), { spawnErrorCode: "ENOENT", exitCode: null, stderr: "" });
    assert.match(problem.message, /Python interpreter `\/nope\/python` was not found \(chosen by argus.server.pythonPath\)/);
    assert.match(problem.message, /Set argus.server.pythonPath/);
    assert.equal(problem.setting, "argus.server.pythonPath");
  });

  it("says how to install the argus package when the interpreter lacks it", () => {
    const stderr = "Traceback (most recent call last):\n  File \"<string>\", line 1\nModuleNotFoundError: No module named 'argus'\n";
    const problem = explainStartupProblem(python("python3", "default"), { exitCode: 1, stderr });
    assert.match(problem.message, /does not have the argus package/);
    assert.match(problem.message, /pip install -e \./);
    assert.match(problem.message, /argus.server.pythonPath/);
  });

  it("counts an old argus without the language server as missing", () => {
    const problem = explainStartupProblem(python("/p"), { exitCode: 1, stderr: "ModuleNotFoundError: No module named 'argus.lsp'" });
    assert.match(problem.message, /No module named 'argus.lsp'/);
    assert.match(problem.message, /pip install -e \./);
  });

  it("names a missing dependency of argus", () => {
    const problem = explainStartupProblem(python("/p"), { exitCode: 1, stderr: "ModuleNotFoundError: No module named 'pygls'" });
    assert.match(problem.message, /missing its dependency 'pygls'/);
  });

  it("shows the last line of an import that fails otherwise", () => {
    const problem = explainStartupProblem(python("/p"), { exitCode: 1, stderr: "Traceback ...\nSyntaxError: invalid syntax\n\n" });
    assert.match(problem.message, /failed: SyntaxError: invalid syntax/);
  });

  it("points at argus.server.command when the configured command is missing", () => {
    const launch: ServerLaunch = { command: "argus-lsp", args: [], source: "argus.server.command" };
    const problem = explainStartupProblem(launch, { spawnErrorCode: "ENOENT", exitCode: null, stderr: "" });
    assert.match(problem.message, /server command `argus-lsp` was not found/);
    assert.equal(problem.setting, "argus.server.command");
  });

  it("sends the user to the log when the import works but the server still stopped", () => {
    const problem = explainStartupProblem(python("/p"), { exitCode: 0, stderr: "" });
    assert.match(problem.message, /stopped during startup\. See the Argus log/);
  });
});
