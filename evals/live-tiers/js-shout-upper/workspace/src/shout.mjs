export function shout(s) {
  return s.toLowerCase();
}
