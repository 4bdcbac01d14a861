// A token only the package's own modules hold: the handle classes' constructors take it, so that
// `new QuireFile(...)` from outside fails with a message instead of building a broken handle.

/** @internal */
export const INTERNAL: unique symbol = Symbol('quire.internal');

/** @internal Throws the misuse error when a handle class is constructed from outside the package. */
export function checkInternal(token: unknown, kind: string, how: string): void {
  if (token !== INTERNAL) throw new Error(`quire: a ${kind} cannot be constructed directly; use ${how}`);
}
