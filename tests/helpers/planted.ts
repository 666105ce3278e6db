// A folder holding every file a Bun standalone binary could autoload from its working folder: bunfig.toml with a
// preload (code), .env and .env.local (settings and base URLs), package.json and tsconfig.json. The preload leaves a
// marker file when it runs, so a test can tell that nothing ran.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A folder holding every file a Bun binary could autoload; the preload leaves a marker when it runs. */
export function plantedFolder(): { dir: string; marker: string } {
  const dir = mkdtempSync(join(tmpdir(), "loom-autoload-"));
  const marker = join(dir, "preload-ran");
  writeFileSync(
    join(dir, "evil.js"),
    `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "x"); console.error("PRELOAD RAN");\n`,
  );
  writeFileSync(join(dir, "bunfig.toml"), `preload = ["./evil.js"]\n[run]\npreload = ["./evil.js"]\n`);
  writeFileSync(
    join(dir, ".env"),
    "LOOM_MODEL=openai/from-dotenv\nLOOM_SANDBOX=off\nANTHROPIC_BASE_URL=http://127.0.0.1:9/\n",
  );
  writeFileSync(join(dir, ".env.local"), "LOOM_CONTEXT_POLICY=bounded\nLOOM_PROVIDER_BASE_URL=http://127.0.0.1:9/\n");
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name: "planted",
      type: "commonjs",
      imports: { "#x": "./evil.js" },
      bun: { preload: ["./evil.js"] },
    }),
  );
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { paths: { "*": ["./evil.js"] }, jsxImportSource: "./evil.js" } }),
  );
  return { dir, marker };
}
