// Loom's version has one source, package.json; tests/version.test.ts fails when anything else disagrees with it.
// The commit and build date are constants `bun build --define` sets in compile.sh; from source they are absent.
import pkg from "../package.json" with { type: "json" };

declare const LOOM_COMMIT: string | undefined;
declare const LOOM_BUILD_DATE: string | undefined;

export const VERSION: string = pkg.version;

/** What the binary was built from: null fields when run from source or built without the information. */
export const BUILD: { commit: string | null; date: string | null } = {
  commit: typeof LOOM_COMMIT === "string" && LOOM_COMMIT !== "" ? LOOM_COMMIT : null,
  date: typeof LOOM_BUILD_DATE === "string" && LOOM_BUILD_DATE !== "" ? LOOM_BUILD_DATE : null,
};

/**
 * `loom --version`: "loom 0.5.0 (commit 1a2b3c4, built 2026-12-01)", "(…commit unknown…)" outside git, "(from
 * source)": the program's name first, as `git --version` and `node --version` users expect in a log.
 */
export function versionLine(build: { commit: string | null; date: string | null } = BUILD): string {
  if (build.commit === null && build.date === null) return `loom ${VERSION} (from source)`;
  return `loom ${VERSION} (commit ${build.commit ?? "unknown"}, built ${build.date ?? "unknown"})`;
}
