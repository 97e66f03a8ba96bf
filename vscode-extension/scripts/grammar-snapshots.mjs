// TextMate grammar snapshot tests over every example (examples/*.argus and examples/buggy/*.argus).
//
// vscode-tmgrammar-snap keeps a snapshot next to each file it tokenizes; the examples belong to the project,
// so they are copied into test/grammar/cases/ (git-ignored) next to the committed snapshots in
// test/grammar/snapshots/. An example without a snapshot fails the run unless --update is given, and so does
// a snapshot whose example is gone. The hand-written scope assertions in test/grammar/*.test.argus run too.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const examples = join(root, "..", "examples");
const snapshots = join(root, "test", "grammar", "snapshots");
const cases = join(root, "test", "grammar", "cases");
const update = process.argv.includes("--update");
const bin = (name) => join(root, "node_modules", ".bin", name);
const grammar = join(root, "syntaxes", "argus.tmLanguage.json");

const sources = [];
for (const dir of [examples, join(examples, "buggy")]) {
  for (const name of readdirSync(dir).sort()) {
    if (name.endsWith(".argus")) {
      sources.push(join(dir, name));
    }
  }
}
if (sources.length === 0) {
  throw new Error(`no examples in ${examples}`);
}
const caseName = (file) => relative(examples, file).replaceAll("/", "__");

rmSync(cases, { recursive: true, force: true });
mkdirSync(cases, { recursive: true });
mkdirSync(snapshots, { recursive: true });
const problems = [];
for (const file of sources) {
  const name = caseName(file);
  copyFileSync(file, join(cases, name));
  const snap = join(snapshots, `${name}.snap`);
  if (existsSync(snap)) {
    copyFileSync(snap, join(cases, `${name}.snap`));
  } else if (!update) {
    problems.push(`${relative(root, file)} has no snapshot: run \`npm run test:grammar:update\` and review the new ${relative(root, snap)}`);
  }
}
const wanted = new Set(sources.map((f) => `${caseName(f)}.snap`));
for (const name of readdirSync(snapshots)) {
  if (!wanted.has(name)) {
    problems.push(`${relative(root, join(snapshots, name))} belongs to no example: delete it`);
  }
}
if (problems.length > 0 && !update) {
  console.error(problems.join("\n"));
  process.exit(1);
}

// The grammar must know every builtin and dtype of the language: ask the argus package (server/argus/dsl)
// when the repository's Python is there, so that a new builtin cannot silently go unhighlighted.
const python = process.env.ARGUS_PYTHON || join(root, "..", ".venv", "bin", "python");
if (existsSync(python)) {
  const listing = spawnSync(python, ["-c", [
    "import json",
    "from argus.dsl.builtins import BUILTINS",
    "from argus.dsl.types import DTYPES",
    "print(json.dumps({'builtins': sorted(BUILTINS), 'dtypes': sorted(DTYPES)}))",
  ].join("; ")], { encoding: "utf8" });
  if (listing.status !== 0) {
    console.error(`${python} could not list the builtins:\n${listing.stderr}`);
    process.exit(1);
  }
  const { builtins, dtypes } = JSON.parse(listing.stdout);
  const grammarText = readFileSync(grammar, "utf8");
  const patterns = JSON.parse(grammarText).repository.expression.patterns;
  const wordsOf = (scope) => new Set(patterns.filter((p) => p.name === scope).flatMap((p) => p.match.match(/[a-z_0-9]+/g)));
  const known = new Set([...wordsOf("support.function.builtin.argus"), ...wordsOf("support.function.verification.argus")]);
  const knownTypes = wordsOf("support.type.dtype.argus");
  const missing = [...builtins.filter((b) => !known.has(b)), ...dtypes.filter((d) => !knownTypes.has(d))];
  if (missing.length > 0) {
    console.error(`dsl_grammar/argus.tmLanguage.json does not highlight: ${missing.join(", ")}`);
    process.exit(1);
  }
  console.log(`✓ the grammar highlights all ${builtins.length} builtins and ${dtypes.length} dtypes of the argus package`);
} else {
  console.log(`- builtin coverage not checked: no ${python} (set ARGUS_PYTHON)`);
}

const run = (tool, args) => spawnSync(bin(tool), args, { cwd: root, stdio: "inherit" }).status;
const snapStatus = run("vscode-tmgrammar-snap", ["--config", "package.json", "-g", grammar, ...(update ? ["--updateSnapshot"] : []), "test/grammar/cases/*.argus"]);
if (update) {
  for (const file of sources) {
    const name = caseName(file);
    copyFileSync(join(cases, `${name}.snap`), join(snapshots, `${name}.snap`));
  }
  for (const name of readdirSync(snapshots)) {
    if (!wanted.has(name)) {
      rmSync(join(snapshots, name));
    }
  }
  console.log(`updated ${sources.length} snapshots in ${relative(root, snapshots)}`);
}
if (snapStatus !== 0 && !update) {
  console.error(
    "A grammar snapshot differs. If an example or dsl_grammar/argus.tmLanguage.json changed on purpose, run " +
      "`npm run test:grammar:update` in vscode-extension/, review the diff of test/grammar/snapshots/, and commit it.",
  );
}
const unitStatus = run("vscode-tmgrammar-test", ["--config", "package.json", "-g", grammar, "test/grammar/*.test.argus"]);
process.exit(snapStatus === 0 && unitStatus === 0 ? 0 : 1);
