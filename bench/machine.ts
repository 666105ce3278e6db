// The machine the benchmark ran on, the process's peak memory, and the binary's start-up time.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { median, quantile } from "./stats.ts";

export type Machine = {
  cpu: string;
  cores: number;
  memory_bytes: number;
  os: string;
  runtime: string;
  date: string;
};

export function describeMachine(date: Date): Machine {
  const list = cpus();
  const versions = process.versions as Record<string, string | undefined>;
  const runtime = versions.bun
    ? `Bun ${versions.bun}`
    : versions.deno
    ? `Deno ${versions.deno}`
    : `Node ${process.version}`;
  return {
    cpu: list[0]?.model.trim() || "unknown",
    cores: list.length,
    memory_bytes: totalmem(),
    os: `${process.platform} ${process.arch}`,
    runtime,
    date: date.toISOString(),
  };
}

/** Peak resident set size of this process so far: VmHWM where /proc has it, else the highest sample seen. */
export class PeakRss {
  #sampled = 0;

  sample(): void {
    this.#sampled = Math.max(this.#sampled, process.memoryUsage().rss);
  }

  read(): { bytes: number; source: "VmHWM" | "sampled rss" } {
    this.sample();
    try {
      const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
      if (match) return { bytes: Number(match[1]) * 1024, source: "VmHWM" };
    } catch { /* not Linux */ }
    return { bytes: this.#sampled, source: "sampled rss" };
  }
}

export const BINARY = fileURLToPath(new URL("../dist/loom", import.meta.url));

export type Startup = { runs: number; median_ms: number; p90_ms: number; built: boolean; version: string };

/** Spawns `dist/loom --version` `runs` times (after one unmeasured run); builds the binary first if it is missing. */
export function measureStartup({ runs = 21 }: { runs?: number } = {}): Startup {
  let built = false;
  if (!existsSync(BINARY)) {
    const build = spawnSync("bash", [fileURLToPath(new URL("../compile.sh", import.meta.url))], { encoding: "utf8" });
    if (build.status !== 0) throw new Error(`bash compile.sh failed: ${build.stderr.trim().split("\n").pop()}`);
    built = true;
  }
  const once = () => {
    const t0 = performance.now();
    const child = spawnSync(BINARY, ["--version"], { encoding: "utf8" });
    const ms = performance.now() - t0;
    if (child.status !== 0) throw new Error(`dist/loom --version exited ${child.status}: ${child.stderr.trim()}`);
    return { ms, version: child.stdout.trim() };
  };
  const { version } = once();
  const times = Array.from({ length: runs }, () => once().ms);
  return { runs, median_ms: median(times), p90_ms: quantile(times, 0.9), built, version };
}
