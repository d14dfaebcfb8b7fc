/// <reference types="vite/client" />
// House rules on size: no function over 120 lines anywhere in src/, the trace viewer's
// modules under 250 lines each, the offline host under 300.
import ts from "typescript";
import { describe, expect, it } from "vitest";

// every source, as text: path ("../src/...") -> source
const SOURCES = import.meta.glob("../src/**/*.ts", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

/** [name, lines] of every function, method and arrow function in `path`. */
function functions(path: string): [string, number][] {
  const file = ts.createSourceFile(path, SOURCES[path], ts.ScriptTarget.ES2020, true);
  const out: [string, number][] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
      const start = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const end = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = (node as ts.FunctionDeclaration).name?.getText(file) ?? "(anonymous)";
      out.push([`${path}:${start + 1} ${name}`, end - start + 1]);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

describe("sizes", () => {
  it("keeps every function at 120 lines or less", () => {
    const paths = Object.keys(SOURCES);
    expect(paths.length).toBeGreaterThan(20);
    const long = paths.flatMap(functions).filter(([, n]) => n > 120);
    expect(long).toEqual([]);
  });

  it("keeps the trace viewer's modules under 250 lines", () => {
    const files = Object.keys(SOURCES).filter((p) => p === "../src/timeline.ts" || p.startsWith("../src/timeline/"));
    const long = files.map((f) => [f, SOURCES[f].split("\n").length] as const).filter(([, n]) => n >= 250);
    expect(files.length).toBeGreaterThan(5);
    expect(long).toEqual([]);
  });

  it("keeps the offline host under 300 lines", () => {
    expect(SOURCES["../src/offline.ts"].split("\n").length).toBeLessThan(300);
  });

  it("measures functions (a check that can fail)", () => {
    const sizes = functions("../src/timeline/paint.ts");
    expect(sizes.some(([name, n]) => name.includes("paint") && n > 10)).toBe(true);
  });
});
