// A tiny test harness: prints one line per case (TAP-like) and exits 1 when any case fails.
let failed = 0;
let n = 0;
export function check(name, actual, expected) {
  n++;
  const ok = JSON.stringify(actual) === JSON.stringify(expected);
  if (!ok) failed++;
  console.log(`${ok ? "ok" : "not ok"} ${n} - ${name}${ok ? "" : `: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`}`);
}
export function done() {
  console.log(`# ${n - failed}/${n} passed`);
  process.exit(failed === 0 ? 0 : 1);
}
