// joinPath("a", "b") is "a/b".
export function joinPath(...parts) {
  return parts.join("/");
}
