// Every handle that owns wasm memory has close(), and a FinalizationRegistry frees it if the
// caller forgets (web-tree-sitter and duckdb-wasm do the same).
import type { EmbindHandle } from './quire.mjs';

const registry = new FinalizationRegistry<EmbindHandle>((handle) => {
  if (!handle.isDeleted()) handle.delete();
});

/** @internal Base of the package's handle classes. */
export abstract class Handle<H extends EmbindHandle> {
  #handle: H | undefined;
  readonly #kind: string;

  protected constructor(handle: H, kind: string) {
    this.#handle = handle;
    this.#kind = kind;
    registry.register(this, handle, this);
  }

  /** The wasm-side object; a plain Error once closed. */
  protected get handle(): H {
    if (!this.#handle) throw new Error(`quire: this ${this.#kind} is closed`);
    return this.#handle;
  }

  /** Whether close() has been called. */
  get closed(): boolean {
    return this.#handle === undefined;
  }

  /** Frees the wasm memory this handle holds. Safe to call twice. */
  close(): void {
    if (!this.#handle) return;
    registry.unregister(this);
    this.#handle.delete();
    this.#handle = undefined;
  }
}
