#!/usr/bin/env node
// Copies Redoc's standalone bundle (React and its styles in one file) into dist/docs/ at build time, so
// that `redoc` is a development dependency: the image's production install leaves it, and its React,
// core-js and Redocly packages, out (about 70 MB), and the API serves this one file.
//
// The one address the bundle would fetch from elsewhere is the logo beside "API docs by Redocly" at the
// foot of the menu, which no option hides (Redoc 2.5): an empty image takes its place here, so the page
// asks nothing of a CDN. apps/api's Chromium test fails on any other address a new Redoc brings.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
const EMPTY_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";

const source = fileURLToPath(import.meta.resolve("redoc/bundles/redoc.standalone.js"));
const target = fileURLToPath(new URL("../dist/docs/redoc.standalone.js", import.meta.url));

const bundle = await readFile(source, "utf8");
await mkdir(dirname(target), { recursive: true });
await writeFile(target, bundle.replaceAll(REDOC_LOGO, EMPTY_IMAGE));
process.stdout.write(`copied ${source} to ${target}\n`);
