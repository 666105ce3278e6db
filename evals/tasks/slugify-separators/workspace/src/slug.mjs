// slugify("Hello, World!") === "hello-world": lowercase ASCII letters and digits joined by single hyphens.
export function slugify(text) {
  return text.toLowerCase().replace(/[^a-z0-9]/g, "-");
}
