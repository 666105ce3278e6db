// Plain-text tables that keep to the width: cells of several lines, values wrapped under themselves, long names
// continued on the next line or clipped.

/** The width text output keeps to: a wider table wraps by design (report columns in groups, long values on more
 * lines, long run names clipped in the middle). */
export const WIDTH = 100;

/** Key-value lines whose values wrap under themselves past WIDTH. */
export function keyValues(rows: [string, string][]): string {
  const keyWidth = Math.max(...rows.map(([k]) => k.length));
  const room = Math.max(20, WIDTH - keyWidth - 2);
  return rows.flatMap(([key, value]) =>
    wrapText(value, room).map((line, i) => `${(i === 0 ? key : "").padEnd(keyWidth)}  ${line}`.trimEnd())
  ).join("\n");
}

/** Words on lines of at most `width` characters (a longer word stays whole on its own line). */
export function wrapText(text: string, width: number): string[] {
  if (text.length <= width) return [text];
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, line];
}

/** A table whose cells may hold several lines: each row as tall as its tallest cell, the others blank below. */
export function tallTable(rows: string[][][], options: { right?: number[] } = {}): string {
  return table(
    rows.flatMap((row) => {
      const height = Math.max(...row.map((cell) => cell.length));
      return Array.from({ length: height }, (_, line) => row.map((cell) => cell[line] ?? ""));
    }),
    options,
  );
}

/** A name cut into pieces of at most `width` characters, so a long one keeps every character on more lines. */
export function chunks(name: string, width: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < name.length; i += width) pieces.push(name.slice(i, i + width));
  return pieces.length > 0 ? pieces : [""];
}

export function table(rows: string[][], { right = [] as number[] } = {}): string {
  // a row shorter than the first has empty cells at its end
  const widths = (rows[0] ?? []).map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  return rows
    .map((r) =>
      r.map((cell, c) => (right.includes(c) ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0))).join("  ")
        .trimEnd()
    )
    .join("\n");
}

/** A cell cut to `width` characters with an ellipsis. */
export function clipCell(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}
