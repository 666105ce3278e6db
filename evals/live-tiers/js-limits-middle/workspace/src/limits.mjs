// Requests per minute each endpoint allows.
export const LIMITS = {
  "/login": 20,
  "/logout": 40,
  "/search": 60,
  "/profile": 80,
  "/orders": 100,
  "/cart": 20,
  "/checkout": 40,
  "/invoices": 60,
  "/reports": 80,
  "/export": 100,
  "/import": 20,
  "/users": 40,
  "/teams": 60,
  "/billing": 80,
  "/upload": 6,
  "/download": 20,
  "/comments": 40,
  "/likes": 60,
  "/tags": 80,
  "/settings": 100,
  "/health": 20,
  "/metrics": 40,
  "/webhooks": 60,
  "/tokens": 80,
  "/audit": 100,
};

export function allowed(endpoint, requests) {
  return requests <= LIMITS[endpoint];
}
