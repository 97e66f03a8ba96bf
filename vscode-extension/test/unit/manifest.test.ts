// The manifest (package.json) and the code must agree: settings, commands, contributed files.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

import { EXTENSION_COMMANDS } from "../../src/protocol";
import { DEFAULTS, readSettings } from "../../src/settings";

const root = join(__dirname, "..", "..", "..");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const properties: Record<string, { default: unknown; scope: string }> = manifest.contributes.configuration.properties;

describe("package.json", () => {
  it("declares exactly the settings the client reads, with the same defaults", () => {
    const read = new Map<string, unknown>();
    readSettings((key) => {
      read.set(`argus.${key}`, undefined);
      return undefined;
    });
    const declared = Object.keys(properties).filter((key) => key !== "argus.trace.server");
    assert.deepEqual([...read.keys()].sort(), declared.sort());
    const defaults = readSettings((key) => properties[`argus.${key}`].default);
    assert.deepEqual(defaults, DEFAULTS);
  });

  it("gives every Argus setting but the trace a resource scope", () => {
    for (const [key, property] of Object.entries(properties)) {
      assert.equal(property.scope, key === "argus.trace.server" ? "window" : "resource", key);
    }
  });

  it("contributes exactly the commands the extension registers", () => {
    const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual(contributed, [...EXTENSION_COMMANDS].sort());
    const source = readFileSync(join(root, "src", "extension.ts"), "utf8");
    for (const command of EXTENSION_COMMANDS) {
      assert.ok(source.includes(`register("${command}"`), `src/extension.ts does not register ${command}`);
    }
  });

  it("points at snippets and a language configuration that parse, with indentation patterns that compile", () => {
    const snippets = JSON.parse(readFileSync(join(root, manifest.contributes.snippets[0].path), "utf8"));
    for (const [name, snippet] of Object.entries<{ prefix: string; body: string[] }>(snippets)) {
      assert.ok(snippet.prefix && Array.isArray(snippet.body) && snippet.body.length > 0, name);
    }
    const config = JSON.parse(readFileSync(join(root, manifest.contributes.languages[0].configuration), "utf8"));
    const increase = new RegExp(config.indentationRules.increaseIndentPattern);
    assert.ok(increase.test("    for k0 in range(0, K, BK):  # the K loop"));
    assert.ok(increase.test("kernel add(x: f32[N], y: out f32[N]):"));
    assert.ok(!increase.test("    acc = dot(a, b, acc)"));
    assert.ok(!increase.test("    small: M = 100"));
  });
});
