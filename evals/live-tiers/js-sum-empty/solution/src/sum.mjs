export function sum(xs) {
  return xs.reduce((a, b) => a + b, 0);
}
