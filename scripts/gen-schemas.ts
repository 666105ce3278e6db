// Regenerates the JSON Schema files in schemas/ from the zod schemas (the zod schema is the source of truth).
// Usage: bun scripts/gen-schemas.ts [--check]   (--check: exit 1 if a file differs instead of writing it)
import { readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { z } from "zod";
import { renderSchemaFile, SCHEMA_PATHS, type SchemaName, SCHEMAS } from "../lib/schemas.ts";

export { renderSchemaFile };

/** Each generated file, relative to the repository root, and the schema it is generated from. */
export const SCHEMA_FILES: readonly { path: string; schema: z.ZodType }[] = (Object.keys(SCHEMAS) as SchemaName[]).map(
  (name) => ({ path: SCHEMA_PATHS[name], schema: SCHEMAS[name] }),
);

async function main(args: string[]): Promise<number> {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const check = args.includes("--check");
  let stale = 0;
  for (const { path, schema } of SCHEMA_FILES) {
    const target = join(root, path);
    const text = renderSchemaFile(schema);
    const current = await readFile(target, "utf8").catch(() => null);
    if (current === text) continue;
    if (check) {
      console.error(`${path} is out of date; run: bun scripts/gen-schemas.ts`);
      stale++;
      continue;
    }
    // Temp file + rename, so an interrupted run never leaves a truncated schema behind.
    await writeFile(`${target}.tmp`, text);
    await rename(`${target}.tmp`, target);
    console.log(`wrote ${path}`);
  }
  return stale === 0 ? 0 : 1;
}

if ((import.meta as { main?: boolean }).main) process.exitCode = await main(process.argv.slice(2));
