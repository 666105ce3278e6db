// Turns a title into a URL slug: lowercase words joined by single hyphens.
export function slugify(title) {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "-");
}

// Shortens a slug to at most `max` characters without cutting a word.
export function truncateSlug(slug, max) {
  if (slug.length <= max) return slug;
  const cut = slug.slice(0, max);
  const lastHyphen = cut.lastIndexOf("-");
  return lastHyphen > 0 ? cut.slice(0, lastHyphen) : cut;
}
