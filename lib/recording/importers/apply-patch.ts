// Codex's apply_patch envelope (*** Begin Patch / *** Update File: PATH / @@ / -old / +new / *** End Patch) as the Loom
// edit it stands for.
import { relativePath } from "./session-lines.ts";
import type { ImportedStep } from "./step.ts";

/**
 * An apply_patch envelope as one Loom edit: the first file's removed lines as old text and added lines as new text
 * (a file the patch adds is a write), every file it touches in the report's paths.
 */
export function patchStep(patch: string, cwd: string | undefined): ImportedStep | undefined {
  const files = [...patch.matchAll(/^\*\*\* (Add|Update|Delete) File: (.+)$/gm)];
  const [first] = files;
  if (!first) return undefined;
  const paths = files.map((m) => relativePath((m[2] ?? "").trim(), cwd));
  const path = paths[0] ?? ".";
  const start = first.index ?? 0;
  const end = files[1]?.index ?? patch.length;
  const body = patch.slice(start, end).split("\n").slice(1);
  const added = body.filter((l) => l.startsWith("+")).map((l) => l.slice(1)).join("\n");
  if (first[1] === "Add") return { kind: "edit", action: "write_file", args: { path, content: added }, paths };
  const removed = body.filter((l) => l.startsWith("-") || l.startsWith(" ")).map((l) => l.slice(1)).join("\n");
  return { kind: "edit", action: "edit_file", args: { path, old_text: removed || "\n", new_text: added }, paths };
}
