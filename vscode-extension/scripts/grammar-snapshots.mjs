// TextMate grammar snapshot tests over every example (examples/*.argus and examples/buggy/*.argus).
//
// vscode-tmgrammar-snap keeps a snapshot next to each file it tokenizes; the examples belong to the project,
// so they are copied into test/grammar/cases/ (git-ignored) next to the committed snapshots in
// test/grammar/snapshots/. An example without a snapshot fails the run unless --update is given, and so does
// a snapshot whose example is gone. The hand-written scope assertions in test/grammar/*.test.argus run too.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
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
const unitStatus = run("vscode-tmgrammar-test", ["--config", "package.json", "-g", grammar, "test/grammar/*.test.argus"]);
process.exit(snapStatus === 0 && unitStatus === 0 ? 0 : 1);
