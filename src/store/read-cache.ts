// The in-process read cache of the hot path (docs/design.md "The hot path": what rarely changes
// — credentials, users, the organization, allowlists, quorum, policies, account keys — is served
// from memory, with an invalidation that is correct across processes on one database).
//
// Correctness rests on migration 015: every write to a cached table bumps its organization's
// generation in the same transaction. A request first reads the generations of the organizations it
// touches (one indexed read, prepared once); whatever this process cached for an organization whose
// generation moved is dropped before anything is served. So a change committed by any process — a
// deleted API key or user, a new policy, a changed quorum or allowlist — is seen by every process on
// its very next request. Values are cached only within a view whose organizations were read this way
// (CacheView), never from a generation read by some earlier request.
//
// Cached values are shared between requests and frozen: callers must not change them.

/** Organizations remembered at most, and entries per organization (least recently used go first). */
const MAX_ORGANIZATIONS = 10_000;
const MAX_ENTRIES_PER_ORGANIZATION = 2_000;

interface OrganizationEntry {
  generation: number;
  values: Map<string, Promise<unknown>>;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value) && !ArrayBuffer.isView(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

export class ReadCache {
  private readonly organizations = new Map<string, OrganizationEntry>();
  /** An organization's parent never changes, so it is remembered without a generation. */
  private readonly parents = new Map<string, string | null>();

  constructor(
    /** The generation of each organization named (0 when it has none yet). */
    private readonly readGenerations: (organizationIds: string[]) => Promise<Map<string, number>>,
  ) {}

  parentOf(organizationId: string): string | null | undefined {
    return this.parents.get(organizationId);
  }

  rememberParent(organizationId: string, parentId: string | null): void {
    if (this.parents.size >= MAX_ORGANIZATIONS) this.parents.delete(this.parents.keys().next().value as string);
    this.parents.set(organizationId, parentId);
  }

  /** Applies generations read elsewhere (combined with another read of the hot path). */
  observe(generations: Map<string, number>, organizationIds: string[]): CacheView {
    for (const id of organizationIds) {
      const generation = generations.get(id) ?? 0;
      const entry = this.organizations.get(id);
      if (entry && entry.generation === generation) {
        // Most recently used last; only once the map is half full: below that nothing is evicted
        // before an organization in use is seen again, and re-inserting on every request rebuilt
        // the map's table, garbage that outlived the young generation (docs/design.md "The hot path").
        if (this.organizations.size > MAX_ORGANIZATIONS / 2) {
          this.organizations.delete(id);
          this.organizations.set(id, entry);
        }
        continue;
      }
      this.organizations.delete(id);
      if (this.organizations.size >= MAX_ORGANIZATIONS) this.organizations.delete(this.organizations.keys().next().value as string);
      this.organizations.set(id, { generation, values: new Map() });
    }
    return new CacheView(this, new Set(organizationIds));
  }

  /** Reads the generations of `organizationIds` and answers a view over them. */
  async view(organizationIds: string[]): Promise<CacheView> {
    const ids = [...new Set(organizationIds)];
    return this.observe(await this.readGenerations(ids), ids);
  }

  /** True when this process keeps values for the organization (at whatever generation). */
  holds(organizationId: string): boolean {
    return this.organizations.has(organizationId);
  }

  /**
   * Keeps `values` read at `generation` (src/store/cold-reads.ts), under the keys the cached
   * repositories read, when that is the generation a request of this process observed last: values
   * read in the same snapshot as the generation they belong to are what a load would have read. A
   * value already kept stays.
   */
  seed(organizationId: string, generation: number, values: [string, unknown][]): void {
    const entry = this.organizations.get(organizationId);
    if (!entry || entry.generation !== generation) return;
    for (const [key, value] of values) {
      if (entry.values.has(key)) continue;
      entry.values.set(key, Promise.resolve(deepFreeze(value)));
      if (entry.values.size > MAX_ENTRIES_PER_ORGANIZATION) entry.values.delete(entry.values.keys().next().value as string);
    }
  }

  /** @internal CacheView's lookup. */
  memo<T>(organizationId: string, key: string, load: () => Promise<T>): Promise<T> {
    const entry = this.organizations.get(organizationId);
    if (!entry) return load();
    const hit = entry.values.get(key);
    if (hit) return hit as Promise<T>;
    const pending = load().then(deepFreeze);
    entry.values.set(key, pending);
    if (entry.values.size > MAX_ENTRIES_PER_ORGANIZATION) entry.values.delete(entry.values.keys().next().value as string);
    // A failed load is not remembered: the next request tries again.
    pending.catch(() => {
      if (entry.values.get(key) === pending) entry.values.delete(key);
    });
    return pending;
  }
}

/** One request's window on the cache: only the organizations whose generations it read are served. */
export class CacheView {
  constructor(
    private readonly cache: ReadCache,
    private readonly fresh: Set<string>,
  ) {}

  covers(organizationId: string): boolean {
    return this.fresh.has(organizationId);
  }

  /** The value cached for `key` in the organization, loading it on a miss; uncached outside the view. */
  memo<T>(organizationId: string, key: string, load: () => Promise<T>): Promise<T> {
    return this.fresh.has(organizationId) ? this.cache.memo(organizationId, key, load) : load();
  }

  /** Extends the view with more organizations (their generations are read now). */
  async widen(organizationIds: string[]): Promise<void> {
    const missing = organizationIds.filter((id) => !this.fresh.has(id));
    if (missing.length === 0) return;
    const more = await this.cache.view(missing);
    for (const id of missing) if (more.covers(id)) this.fresh.add(id);
  }
}
