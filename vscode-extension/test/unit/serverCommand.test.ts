import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { describeLaunch, expandVariables, resolveServerLaunch } from "../../src/serverCommand";

const server = (command: string[] = [], pythonPath = "") => ({ command, pythonPath });

describe("resolveServerLaunch", () => {
  it("runs the configured command as program plus arguments", () => {
    const launch = resolveServerLaunch(server(["/opt/argus/bin/argus", "serve", "--log-level", "debug"], "/ignored/python"));
    assert.deepEqual(launch, { command: "/opt/argus/bin/argus", args: ["serve", "--log-level", "debug"], source: "argus.server.command" });
  });

  it("runs the configured interpreter as <python> -m argus serve", () => {
    const launch = resolveServerLaunch(server([], "/repo/.venv/bin/python"), { pythonExtensionInterpreter: "/other/python" });
    assert.deepEqual(launch, {
      command: "/repo/.venv/bin/python",
      args: ["-m", "argus", "serve"],
      source: "argus.server.pythonPath",
      python: "/repo/.venv/bin/python",
    });
  });

  it("takes the Python extension's interpreter when nothing is configured", () => {
    const launch = resolveServerLaunch(server(), { pythonExtensionInterpreter: "/home/u/.pyenv/versions/3.11/bin/python" });
    assert.equal(launch.command, "/home/u/.pyenv/versions/3.11/bin/python");
    assert.equal(launch.source, "Python extension");
  });

  it("falls back to python3", () => {
    const launch = resolveServerLaunch(server());
    assert.equal(launch.command, "python3");
    assert.deepEqual(launch.args, ["-m", "argus", "serve"]);
    assert.equal(launch.source, "default");
  });

  it("resolves a relative interpreter path against the workspace folder", () => {
    const launch = resolveServerLaunch(server([], ".venv/bin/python"), { workspaceFolder: "/work/repo" });
    assert.equal(launch.command, "/work/repo/.venv/bin/python");
  });

  it("leaves a bare program name for PATH lookup", () => {
    assert.equal(resolveServerLaunch(server([], "python3.12"), { workspaceFolder: "/w" }).command, "python3.12");
  });

  it("expands variables in every part of the command", () => {
    const launch = resolveServerLaunch(server(["${workspaceFolder}/.venv/bin/argus", "serve", "--root=${workspaceFolder}"]), {
      workspaceFolder: "/w",
    });
    assert.deepEqual([launch.command, ...launch.args], ["/w/.venv/bin/argus", "serve", "--root=/w"]);
  });

  it("treats a command of empty strings as unset", () => {
    assert.equal(resolveServerLaunch(server([""], "/p/python")).source, "argus.server.pythonPath");
  });
});

describe("expandVariables", () => {
  it("expands ~, ${userHome} and ${env:NAME}", () => {
    const context = { home: "/home/u", workspaceFolder: "/w" };
    assert.equal(expandVariables("~/venv/bin/python", context), "/home/u/venv/bin/python");
    assert.equal(expandVariables("${userHome}/x", context), "/home/u/x");
    assert.equal(expandVariables("${env:ARGUS_TEST_VAR}/python", context, { ARGUS_TEST_VAR: "/opt" }), "/opt/python");
  });

  it("keeps ${workspaceFolder} when there is no folder", () => {
    assert.equal(expandVariables("${workspaceFolder}/python", {}), "${workspaceFolder}/python");
  });
});

describe("describeLaunch", () => {
  it("quotes arguments with spaces and names the source", () => {
    const text = describeLaunch({ command: "/my venv/python", args: ["-m", "argus", "serve"], source: "argus.server.pythonPath" });
    assert.equal(text, "'/my venv/python' -m argus serve (from argus.server.pythonPath)");
  });
});
