// Type-checks the gateway's answers against dashboard.d.ts with the TypeScript compiler.
// Usage: node check.mjs DIR, where DIR holds <name>.json files of {"type": "<interface>", "value": <answer>}.
// Each answer becomes `const a = <value> as const; const t: <interface> = mutable(a);`: the literal keeps its
// string literal types ("Active"), mutable() drops the readonly that `as const` adds, and assigning a variable
// (not a fresh literal) allows the fields the dashboard does not read, as a JSON answer may carry them.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = process.argv[2];
if (!dir) {
  console.error("usage: node check.mjs DIR");
  process.exit(2);
}
const files = fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
let src = `import type * as D from ${JSON.stringify(path.join(here, "dashboard"))};\n`;
src += "type Mutable<T> = T extends readonly (infer E)[] ? Mutable<E>[] : T extends object ? { -readonly [K in keyof T]: Mutable<T[K]> } : T;\n";
src += "declare function mutable<V>(v: V): Mutable<V>;\n";
files.forEach((f, i) => {
  const { type, value } = JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"));
  src += `// ${f}\nconst a${i} = ${JSON.stringify(value)} as const;\nexport const t${i}: D.${type} = mutable(a${i});\n`;
});
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "zc-dashboard-types-")), "check.ts");
fs.writeFileSync(out, src);
const program = ts.createProgram([out], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, skipLibCheck: true, types: [] });
const diags = ts.getPreEmitDiagnostics(program);
for (const d of diags) {
  const where = d.file ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : "";
  console.error(where + ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}
console.log(`${files.length} answers checked, ${diags.length} type errors`);
fs.rmSync(path.dirname(out), { recursive: true, force: true });
process.exit(diags.length ? 1 : 0);
