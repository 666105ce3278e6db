// Seconds to milliseconds.
export function toMs(seconds) {
  return seconds * 100;
}
