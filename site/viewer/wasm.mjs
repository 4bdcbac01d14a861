// quire.wasm compiled once for the page and every worker it starts: the page hands the compiled
// module to a worker (a WebAssembly.Module crosses postMessage without being compiled again), so
// a worker's start is the instantiation alone. The package's init() takes the module as it is.
const WASM_URL = new URL('/pkg/quire.wasm', location.href).href;

let compiling = null;

/** The compiled module, compiled while its bytes arrive (streaming), once. */
export function compiled() {
  compiling ??= (async () => {
    const response = await fetch(WASM_URL);
    if (!response.ok) throw new Error(`${WASM_URL}: HTTP ${response.status}`);
    try {
      return await WebAssembly.compileStreaming(response.clone());
    } catch {
      // A server that sends the wrong MIME type: compile from the bytes instead.
      return await WebAssembly.compile(await response.arrayBuffer());
    }
  })();
  compiling.catch(() => {
    compiling = null;
  });
  return compiling;
}
