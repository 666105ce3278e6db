// titleCase("a b") is "A B": every word capitalised.
export function titleCase(s) {
  return s.split(" ").map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(" ");
}
