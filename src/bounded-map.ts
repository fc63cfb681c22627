// Caches of values that are cheap to read again: a Map that forgets everything when a new key
// would take it past its bound, so a stream of distinct keys cannot grow it without limit.
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.clear();
    return super.set(key, value);
  }
}
