// A folder's files and their bytes, to show that something changed nothing on disk.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Every file under `dir` (links not followed) with its bytes as latin1 text, keyed by its path below `dir`. */
export function fileTree(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (at: string, prefix: string) => {
    for (const name of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, name.name);
      if (name.isDirectory()) walk(path, `${prefix}${name.name}/`);
      else if (name.isFile()) files[`${prefix}${name.name}`] = readFileSync(path, "latin1");
    }
  };
  walk(dir, "");
  return files;
}
