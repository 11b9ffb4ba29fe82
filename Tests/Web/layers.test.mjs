// The page's layout (Web/README.md, docs/web.md): every module sits in one folder per layer, and a
// layer imports only from itself and the layers below it. Parses the import lines of every module
// (static imports, `export … from`, dynamic `import()` and JSDoc `import("…")` types), resolves them,
// and checks that each names a module that exists, in an allowed layer, and that each imported name
// is one the module exports; and that no modules import each other in a cycle. The page's own modules
// that touch the DOM (interface/) are checked here too, though no Node test can load them.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The layers, lowest first: a module may import from its own layer and the ones before it. */
export const LAYERS = Object.freeze(["wire", "session", "sync", "player", "interface"]);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "Web", "static");

/** Every `.js` file under `directory`, as paths relative to it with `/` separators. */
function modulesUnder(directory, prefix = "") {
  const found = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) found.push(...modulesUnder(join(directory, entry.name), path));
    else if (entry.name.endsWith(".js")) found.push(path);
  }
  return found.sort();
}

/** Comments removed, string contents kept (good enough for the page's modules: no regex literals hold quotes). */
function withoutComments(source) {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/**
 * The imports of one module's source: `{specifier, names, kind}` where kind is "static" (an import or
 * `export … from` statement, `names` the imported names or null for a namespace / side-effect import),
 * "dynamic" (`import("…")` in code) or "type" (`import("…")` in a JSDoc comment, `names` the type used).
 */
export function importsOf(source) {
  const found = [];
  const code = withoutComments(source);
  const statement = /(?:^|[;\n])\s*(import|export)\s*([\s\S]*?)\s*from\s*["']([^"']+)["']/g;
  for (const match of code.matchAll(statement)) {
    const [, keyword, clause, specifier] = match;
    if (keyword === "export" && !/^(\{|\*)/.test(clause)) continue; // `export const x = …` does not import
    const braces = clause.match(/\{([\s\S]*)\}/);
    const names = braces
      ? braces[1].split(",").map((part) => part.trim().split(/\s+as\s+/)[0]).filter((name) => name && name !== "default")
      : null;
    found.push({ specifier, names, kind: "static" });
  }
  for (const match of code.matchAll(/^\s*import\s*["']([^"']+)["']/gm)) found.push({ specifier: match[1], names: null, kind: "static" });
  for (const match of code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) found.push({ specifier: match[1], names: null, kind: "dynamic" });
  for (const match of source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)(?:\.([A-Za-z_$][\w$]*))?/g)) {
    if (code.includes(match[0])) continue; // the dynamic ones, counted above
    found.push({ specifier: match[1], names: match[2] ? [match[2]] : null, kind: "type" });
  }
  return found;
}

/** The names a module's source exports (declarations and `export { … }` lists). */
export function exportsOf(source) {
  const code = withoutComments(source);
  const names = new Set();
  for (const match of code.matchAll(/^\s*export\s+(?:async\s+)?(?:function\*?|class|const|let|var)\s+([A-Za-z_$][\w$]*)/gm)) names.add(match[1]);
  for (const match of code.matchAll(/^\s*export\s*\{([^}]*)\}/gm)) {
    for (const part of match[1].split(",")) {
      const name = part.trim().split(/\s+as\s+/).pop();
      if (name) names.add(name);
    }
  }
  return names;
}

/** The layer of a module path relative to Web/static ("sync/clock.js" -> "sync"), or null at the top. */
export function layerOf(path) {
  const parts = path.split("/");
  return parts.length > 1 ? parts[0] : null;
}

/** Whether a module in layer `from` may import one in layer `to`. */
export function mayImport(from, to, layers = LAYERS) {
  const a = layers.indexOf(from);
  const b = layers.indexOf(to);
  return a >= 0 && b >= 0 && b <= a;
}

/** The import graph of the page: path -> [{target, names, kind, specifier}]. */
function graph() {
  const modules = modulesUnder(ROOT);
  const edges = new Map();
  for (const path of modules) {
    const source = readFileSync(join(ROOT, path), "utf8");
    edges.set(path, importsOf(source).map((edge) => {
      const target = relative(ROOT, resolve(dirname(join(ROOT, path)), edge.specifier)).split(sep).join("/");
      return { ...edge, target };
    }));
  }
  return { modules, edges };
}

test("the import parser reads the forms the page uses", () => {
  const source = [
    '// import { notThis } from "./commented.js";',
    'import { a, b as c,',
    '  d } from "../wire/bytes.js";',
    'import * as all from "./all.js";',
    'import "./effect.js";',
    'export { e } from "./reexport.js";',
    'export const f = 1;',
    '/** @param {import("../session/session.js").GroupSession} s */',
    'const later = await import("./later.js");',
  ].join("\n");
  assert.deepEqual(importsOf(source), [
    { specifier: "../wire/bytes.js", names: ["a", "b", "d"], kind: "static" },
    { specifier: "./all.js", names: null, kind: "static" },
    { specifier: "./reexport.js", names: ["e"], kind: "static" },
    { specifier: "./effect.js", names: null, kind: "static" },
    { specifier: "./later.js", names: null, kind: "dynamic" },
    { specifier: "../session/session.js", names: ["GroupSession"], kind: "type" },
  ]);
  assert.deepEqual([...exportsOf("export class A {}\nexport async function b() {}\nexport { C as D, e };\nconst x = 1;")].sort(), ["A", "D", "b", "e"]);
  assert.equal(layerOf("sync/clock.js"), "sync");
  assert.equal(layerOf("app.js"), null);
  assert.ok(mayImport("interface", "wire"));
  assert.ok(mayImport("sync", "sync"));
  assert.ok(!mayImport("session", "sync"));
  assert.ok(!mayImport("wire", null));
});

test("every module sits in a layer's folder, and index.html loads the interface's app.js", () => {
  const { modules } = graph();
  assert.ok(modules.length >= 25, `found only ${modules.length} modules`);
  for (const path of modules) assert.ok(LAYERS.includes(layerOf(path)), `${path} is in no layer (${LAYERS.join(", ")})`);
  const html = readFileSync(join(ROOT, "index.html"), "utf8");
  const scripts = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(scripts, ["interface/app.js"]);
  assert.ok(modules.includes(scripts[0]));
});

test("every import names a module that exists and a name it exports", () => {
  const { modules, edges } = graph();
  const exported = new Map(modules.map((path) => [path, exportsOf(readFileSync(join(ROOT, path), "utf8"))]));
  let checked = 0;
  for (const [path, list] of edges) {
    for (const edge of list) {
      assert.ok(edge.specifier.startsWith("./") || edge.specifier.startsWith("../"), `${path} imports ${edge.specifier}: the page imports only its own modules, relatively`);
      assert.ok(exported.has(edge.target), `${path} imports ${edge.specifier}, which is no module (${edge.target})`);
      for (const name of edge.names ?? []) {
        assert.ok(exported.get(edge.target).has(name), `${path} imports ${name} from ${edge.specifier}, which does not export it`);
        checked += 1;
      }
    }
  }
  assert.ok(checked > 100, `checked only ${checked} names`);
});

test("a layer imports only from itself and the layers below it", () => {
  const { edges } = graph();
  const upward = [];
  for (const [path, list] of edges) {
    for (const edge of list) {
      if (!mayImport(layerOf(path), layerOf(edge.target))) upward.push(`${path} -> ${edge.target} (${edge.kind})`);
    }
  }
  assert.deepEqual(upward, [], `imports from a higher layer (order: ${LAYERS.join(" < ")})`);
});

test("no modules import each other in a cycle", () => {
  const { edges } = graph();
  const state = new Map(); // path -> "visiting" | "done"
  const cycles = [];
  const visit = (path, stack) => {
    if (state.get(path) === "done") return;
    if (state.get(path) === "visiting") {
      cycles.push([...stack.slice(stack.indexOf(path)), path].join(" -> "));
      return;
    }
    state.set(path, "visiting");
    for (const edge of edges.get(path) ?? []) if (edge.kind !== "type") visit(edge.target, [...stack, path]);
    state.set(path, "done");
  };
  for (const path of edges.keys()) visit(path, []);
  assert.deepEqual(cycles, []);
});
