import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { endServerProcess, exited, spawnServer } from "../../src/serverProcess";

const node = process.execPath;
const quick = { graceMs: 300, termMs: 300 };
const noLog = () => undefined;

// real child processes: one that exits when asked (its stdin closes), one that ignores that and sits until
// SIGTERM, one that ignores SIGTERM too (a server stuck in a proof) and only SIGKILL ends
const EXITS_ON_EOF = "process.stdin.resume(); process.stdin.on('end', () => process.exit(0));";
const SITS = "setInterval(() => undefined, 1000);";
const IGNORES_TERM = "process.on('SIGTERM', () => undefined); setInterval(() => undefined, 1000); console.log('ready');";

describe("spawnServer", () => {
  it("resolves with the running process, and rejects when the program does not exist", async () => {
    const child = await spawnServer(node, ["-e", SITS], {}, noLog);
    assert.ok(typeof child.pid === "number" && child.exitCode === null);
    child.kill("SIGKILL");
    assert.equal(await exited(child, 5000), true);
    await assert.rejects(spawnServer("/nonexistent/python3", ["-m", "argus", "serve"], {}, noLog), /ENOENT/);
  });
});

describe("endServerProcess", () => {
  it("waits for a server that exits by itself", async () => {
    const child = await spawnServer(node, ["-e", EXITS_ON_EOF], {}, noLog);
    child.stdin?.end(); // as after exit: the server leaves
    assert.equal(await endServerProcess(child, { graceMs: 5000, termMs: 300 }), "exited");
    assert.equal(child.exitCode, 0);
  });

  it("terminates a server that has not exited within the grace time", async () => {
    const child = await spawnServer(node, ["-e", SITS], {}, noLog);
    const started = Date.now();
    assert.equal(await endServerProcess(child, quick), "terminated");
    assert.equal(child.signalCode, "SIGTERM");
    assert.ok(Date.now() - started >= quick.graceMs - 20, "it was given its grace time first");
  });

  it("kills a server that ignores SIGTERM", async () => {
    const child = await spawnServer(node, ["-e", IGNORES_TERM], {}, noLog);
    await new Promise((resolve) => child.stdout?.once("data", resolve)); // its SIGTERM handler is installed
    assert.equal(await endServerProcess(child, quick), "killed");
    assert.equal(child.signalCode, "SIGKILL");
  });

  it("returns at once for a process that already exited", async () => {
    const child = await spawnServer(node, ["-e", "process.exit(3)"], {}, noLog);
    await exited(child, 5000);
    assert.equal(await endServerProcess(child, quick), "exited");
  });
});
