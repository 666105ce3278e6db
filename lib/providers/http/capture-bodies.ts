// A fetch that remembers the JSON bodies it sent, for request traces (--trace). Only bodies: headers, which carry the
// credentials, are never kept.
type Fetch = typeof globalThis.fetch;

export function captureBodies(inner: Fetch = globalThis.fetch): { fetch: Fetch; take: () => unknown[] } {
  let bodies: unknown[] = [];
  const fetch: Fetch = (input, init) => {
    const body = init?.body;
    if (typeof body === "string") {
      try {
        bodies.push(JSON.parse(body));
      } catch {
        bodies.push(body);
      }
    }
    return inner(input, init);
  };
  return {
    fetch,
    take: () => {
      const taken = bodies;
      bodies = [];
      return taken;
    },
  };
}
