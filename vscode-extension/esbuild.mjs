// Bundles the extension and vscode-languageclient into dist/extension.js (the `vscode` module stays external).
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");
const watch = process.argv.includes("--watch");

const context = await esbuild.context({
  entryPoints: ["src/extension.ts"],
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node18",
  outfile: "dist/extension.js",
  external: ["vscode"],
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: "info",
});
if (watch) {
  await context.watch();
} else {
  await context.rebuild();
  await context.dispose();
}
