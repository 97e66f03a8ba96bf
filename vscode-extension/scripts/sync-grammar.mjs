// Copies the TextMate grammar from dsl_grammar/ (its one source of truth) into syntaxes/, checking it first.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "..", "dsl_grammar", "argus.tmLanguage.json");
const target = join(root, "syntaxes", "argus.tmLanguage.json");

const text = readFileSync(source, "utf8");
const grammar = JSON.parse(text);
if (grammar.scopeName !== "source.argus") {
  throw new Error(`${source}: scopeName is ${grammar.scopeName}, expected source.argus`);
}
const missing = [...text.matchAll(/"include":\s*"#([\w-]+)"/g)].map((m) => m[1]).filter((name) => !(name in grammar.repository));
if (missing.length > 0) {
  throw new Error(`${source}: includes missing from the repository: ${[...new Set(missing)].join(", ")}`);
}
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, text);
