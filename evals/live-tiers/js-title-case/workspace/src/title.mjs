// titleCase("a b") is "A B": every word capitalised.
export function titleCase(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
