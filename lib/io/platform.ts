// The one place that knows which runtime we are on.
import process from "node:process";
import { fileURLToPath } from "node:url";

const runtime: "bun" | "deno" | "node" = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";

/** argv that starts this same loom again: the compiled binary alone, or the runtime plus main.ts. */
export function selfCommand(mainUrl: string): [string, ...string[]] {
  const exec = process.execPath;
  const script = mainUrl.startsWith("file:") ? fileURLToPath(mainUrl) : mainUrl;
  const compiled = script.includes("$bunfs") || script.includes("~BUN") ||
    !/(^|[\\/])(bun|deno|node)(\.exe)?$/.test(exec);
  if (compiled) return [exec];
  if (runtime === "deno") return [exec, "run", "--allow-all", script];
  return [exec, script];
}
