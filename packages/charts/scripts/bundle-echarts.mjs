// Bundles the parts of ECharts the charts use (core, the line chart, five components, the SVG renderer)
// into dist/render-chart.js after tsc, so that a production install carries a few hundred kilobytes of
// ECharts instead of its 70 MB package (browser bundles, every chart type, types, zrender): echarts is a
// development dependency. Everything else the module imports stays an import.
import { rm } from "node:fs/promises";
import { build } from "esbuild";

const bundled = /^(echarts|zrender|tslib)(\/|$)/;

await build({
  entryPoints: ["dist/render-chart.js"],
  outfile: "dist/render-chart.js",
  allowOverwrite: true,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  legalComments: "inline",
  logLevel: "warning",
  plugins: [
    {
      name: "only-echarts",
      setup(plugin) {
        plugin.onResolve({ filter: /^[^./]/ }, (args) => (bundled.test(args.path) ? undefined : { path: args.path, external: true }));
      },
    },
  ],
});
// tsc's source map describes the module before bundling: it would mislead.
await rm("dist/render-chart.js.map", { force: true });
