// Headless Chromium for page tests: find the browser, dump a page's DOM, take a screenshot, read screenshot pixels.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { inflateSync } from "node:zlib";

/** Path of a Chromium binary, or null when none is installed (Debian's package installs /usr/bin/chromium). */
export function findChromium(env: Record<string, string | undefined> = process.env): string | null {
  const dirs = ["/usr/bin", ...(env.PATH ?? "").split(delimiter).filter(Boolean)];
  for (const dir of dirs) {
    for (const name of ["chromium", "chromium-browser"]) {
      const path = join(dir, name);
      if (existsSync(path)) return path;
    }
  }
  return null;
}

/** Flags that keep a headless run hermetic: no network beyond the page, no sync, no first-run UI, a fresh profile. */
const HERMETIC_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Runs Chromium once with a new temporary profile, removed afterwards; resolves with its stdout. */
async function runChromium(binary: string, args: string[]): Promise<string> {
  const profile = await mkdtemp(join(tmpdir(), "loom-chromium-"));
  try {
    return await new Promise<string>((resolve, reject) => {
      // The timeout only guards against a hung browser; it kills the child rather than asserting on speed.
      execFile(binary, [...HERMETIC_FLAGS, `--user-data-dir=${profile}`, ...args], {
        timeout: 600_000,
        maxBuffer: 64 * 1024 * 1024,
        encoding: "utf8",
      }, (error, stdout, stderr) => {
        if (error) reject(new Error(`Chromium failed (${error.message}); stderr: ${String(stderr).slice(-400)}`));
        else resolve(String(stdout));
      });
    });
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}

/** The page's DOM after Chromium parsed and laid it out. */
export function dumpDom(binary: string, url: string): Promise<string> {
  return runChromium(binary, ["--dump-dom", url]);
}

/** Saves a PNG screenshot of the page at `path`. */
export async function screenshot(
  binary: string,
  { url, path, width = 1200, height = 1600 }: { url: string; path: string; width?: number; height?: number },
): Promise<void> {
  await runChromium(binary, [`--screenshot=${path}`, `--window-size=${width},${height}`, url]);
}

export type Image = { width: number; height: number; pixel: (x: number, y: number) => [number, number, number] };

/** Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes), enough to inspect rendered colours. */
export async function readPng(path: string): Promise<Image> {
  const data = new Uint8Array(await readFile(path));
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const signature = [137, 80, 78, 71, 13, 10, 26, 10];
  if (!signature.every((b, i) => data[i] === b)) throw new Error(`${path} is not a PNG`);
  let width = 0, height = 0, colorType = 0;
  const idat: Uint8Array[] = [];
  for (let at = 8; at < data.length;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...data.subarray(at + 4, at + 8));
    const body = data.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      const depth = body[8], interlace = body[12];
      colorType = body[9];
      if (depth !== 8 || interlace !== 0 || (colorType !== 2 && colorType !== 6)) {
        throw new Error(`Unsupported PNG (depth ${depth}, colour type ${colorType}, interlace ${interlace})`);
      }
    } else if (type === "IDAT") idat.push(body);
    else if (type === "IEND") break;
    at += 12 + length;
  }
  const raw = new Uint8Array(inflateSync(Buffer.concat(idat)));
  const bpp = colorType === 6 ? 4 : 3;
  const stride = width * bpp;
  const pixels = new Uint8Array(height * stride);
  for (let row = 0; row < height; row++) {
    const filter = raw[row * (stride + 1)];
    const src = raw.subarray(row * (stride + 1) + 1, (row + 1) * (stride + 1));
    const out = pixels.subarray(row * stride, (row + 1) * stride);
    const prev = row > 0 ? pixels.subarray((row - 1) * stride, row * stride) : new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? out[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      let predictor = 0;
      if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      out[i] = (src[i] + predictor) & 0xff;
    }
  }
  return {
    width,
    height,
    pixel: (x, y) => {
      const at = y * stride + x * bpp;
      return [pixels[at], pixels[at + 1], pixels[at + 2]];
    },
  };
}

/** How many pixels are within `tolerance` (per channel) of a `#rrggbb` colour. */
export function countColor(image: Image, hex: string, { tolerance = 24 }: { tolerance?: number } = {}): number {
  const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  let count = 0;
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const got = image.pixel(x, y);
      if (got.every((v, i) => Math.abs(v - want[i]) <= tolerance)) count++;
    }
  }
  return count;
}

/**
 * Measures a page's layout in Chromium at a window size: `measure` is the body of a script run after the page laid
 * out, returning a JSON-able value. The page's own CSP (no scripts) is lifted from a copy for the measurement only.
 */
export async function measureLayout<T>(
  binary: string,
  { html, width, height = 2400, measure }: { html: string; width: number; height?: number; measure: string },
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "loom-layout-"));
  try {
    const page = join(dir, "page.html");
    const script = `<script>window.addEventListener("load", () => { const value = (() => { ${measure} })(); ` +
      `const pre = document.createElement("pre"); pre.id = "layout-result"; pre.textContent = JSON.stringify(value); ` +
      `document.body.appendChild(pre); });</script>`;
    const copy = html.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, "").replace(
      "</body>",
      `${script}</body>`,
    );
    await writeFile(page, copy);
    const dom = await runChromium(binary, [
      `--window-size=${width},${height}`,
      "--virtual-time-budget=5000",
      "--dump-dom",
      pathToFileURL(page).href,
    ]);
    const found = dom.match(/<pre id="layout-result">([^<]*)<\/pre>/);
    if (!found) throw new Error("the layout script did not run");
    return JSON.parse(
      found[1].replaceAll("&quot;", '"').replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&"),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
