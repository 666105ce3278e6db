// An LRU cache: get() and set() make a key the most recently used; over capacity, the least recently used goes.
export class LruCache {
  constructor(capacity) {
    this.capacity = capacity;
    this.map = new Map();
  }
  get(key) {
    return this.map.get(key);
  }
  set(key, value) {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) {
      const newest = [...this.map.keys()].pop();
      this.map.delete(newest);
    }
  }
  keys() {
    return [...this.map.keys()];
  }
}
