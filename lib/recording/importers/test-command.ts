// Whether a shell command another agent ran is a test run: the test runners and the package scripts that call them.
// A command that runs tests and then something else still counts (`cd x && pytest -q | tail`): what it reports is a
// test result. Only the recognised runners count, so an unknown script is an opaque command, never a guessed test.

const RUNNERS = [
  /\bpytest\b/,
  /\bpython[0-9.]*\s+-m\s+(pytest|unittest)\b/,
  /\b(npm|pnpm|yarn|bun)\s+(run\s+)?test\b/,
  /\bbun\s+test\b/,
  /\bdeno\s+test\b/,
  /\b(npx\s+|bunx\s+)?(jest|vitest|mocha)\b(?!\.)/,
  /\bcargo\s+(test|nextest)\b/,
  /\bgo\s+test\b/,
  /\bmix\s+test\b/,
  /\b(bundle\s+exec\s+)?rspec\b/,
  /\brake\s+test\b/,
  /\bphpunit\b/,
  /\b(mvn|gradle|\.\/gradlew|\.\/mvnw)\b.*\btest\b/,
  /\bdotnet\s+test\b/,
  /\bctest\b/,
  /\bmake\s+(test|check)\b/,
  /\btox\b/,
  /\bnox\b/,
];

/** The shell command line is a run of a known test runner. */
export function isTestCommand(command: string): boolean {
  return RUNNERS.some((runner) => runner.test(command));
}
