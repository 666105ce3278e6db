// parseCsvLine('a,"b,c",d') -> ["a", "b,c", "d"]. RFC 4180 quoting: a quoted field may hold commas, and "" is a quote.
export function parseCsvLine(line) {
  return line.split(",").map((field) => field.replace(/^"|"$/g, ""));
}
