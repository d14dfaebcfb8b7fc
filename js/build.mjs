// Bundles each widget entry point into one ESM file inside the Python package.
import { build } from "esbuild";

// one bundle per view (plotly.js is bundled into the views that draw figures, evaluated on
// first use); the dashboard bundle holds every view
const entries = ["timeline", "table", "stepgraph", "memory", "dashboard", "compare",
  "pipelinegraph", "podview", "overview", "opstats", "kernels", "input", "xla"];
for (const name of entries) {
  await build({
    entryPoints: [`src/${name}.ts`],
    bundle: true,
    format: "esm",
    target: "es2020",
    minify: true,
    sourcemap: false,
    outfile: `../tfprof_nb/static/${name}.js`,
    logLevel: "warning",
  });
}
// The offline host is inlined into reports and exported notebooks as a classic script.
await build({
  entryPoints: ["src/offline.ts"],
  bundle: true,
  format: "iife",
  target: "es2020",
  minify: true,
  outfile: "../tfprof_nb/static/offline.js",
  logLevel: "warning",
});
