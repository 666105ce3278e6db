// The run-local, content-addressed result store. It lives in memory only, so nothing survives the run.
import { type Digest, DigestIndex, digestOf, isDigest, utf8Length } from "../text/digest.ts";

export type StoredResult = { digest: Digest; bytes: number };

export class ResultStore {
  readonly #items = new Map<Digest, string>();
  readonly #index = new DigestIndex();
  #bytes = 0;

  put(content: string): StoredResult {
    const digest = digestOf(content);
    const bytes = utf8Length(content);
    if (!this.#items.has(digest)) {
      this.#items.set(digest, content);
      this.#index.add(digest);
      this.#bytes += bytes;
    }
    return { digest, bytes };
  }

  /** Adds content recorded elsewhere, checking that it matches its digest. */
  putVerified(digest: string, content: string): boolean {
    if (digestOf(content) !== digest) return false;
    this.put(content);
    return true;
  }

  /** The short form requests show for a stored digest (see DigestIndex). */
  abbreviate(digest: string): string {
    return this.#index.abbreviate(digest);
  }

  /** The stored digest a whole or abbreviated digest names. */
  resolve(ref: string): Digest | undefined {
    return this.#index.resolve(ref);
  }

  get(digest: string): string | undefined {
    return isDigest(digest) ? this.#items.get(digest) : undefined;
  }

  has(digest: string): boolean {
    return isDigest(digest) && this.#items.has(digest);
  }

  size(digest: string): number | undefined {
    const content = this.get(digest);
    return content === undefined ? undefined : utf8Length(content);
  }

  get count(): number {
    return this.#items.size;
  }

  get totalBytes(): number {
    return this.#bytes;
  }

  clear(): void {
    this.#items.clear();
    this.#index.clear();
    this.#bytes = 0;
  }
}
