export function first(xs) {
  return xs[0];
}

export function last(xs) {
  return xs[xs.length];
}
