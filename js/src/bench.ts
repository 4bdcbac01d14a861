// The benchmark harness, for the Node and browser runners (bench/). The cases are C++: the same
// code `quire bench` runs natively.
import { wasm } from './module.js';

interface BenchBindings {
  benchList(): string;
  benchRun(filter: string, quick: boolean, large: boolean, seconds: number, metaJson: string, progress?: (i: number, n: number, name: string) => void): string;
  benchGates(filter: string, progress?: (name: string) => void): string;
  benchInput(name: string): Uint8Array | undefined;
}

export interface BenchRunOptions {
  /** Substring of case names (comma separates alternatives). */
  filter?: string;
  /** Short budgets, for smoke runs. */
  quick?: boolean;
  /** Include the large cases. */
  large?: boolean;
  /** Time budget of one case's timed samples, in seconds (default 2). */
  seconds?: number;
  /** Everything of the reading but its cases: target, runtime, build, machine, startup. */
  meta?: Record<string, unknown>;
  /** Called before each case. */
  onProgress?: (index: number, count: number, name: string) => void;
}

export interface GateResult {
  name: string;
  baseNs: number;
  fourNs: number;
  ratio: number;
  twinBaseNs: number;
  twinFourNs: number;
  twinRatio: number;
  /** The gate's bounds: 1.5 to 8 for linear work, 0 to 2.5 for a lookup. */
  floor: number;
  ceiling: number;
  passed: boolean;
  twinFailed: boolean;
  error: string;
}

const b = () => wasm() as unknown as BenchBindings;

/** The benchmark harness (same cases and measuring code as `quire bench`). */
export const bench = {
  /** The registered cases. */
  list(): { name: string; large: boolean }[] {
    return JSON.parse(b().benchList());
  },
  /** Runs the cases and returns the reading (schema quire-reading/1). Blocks while it runs: use a Worker in browsers. */
  run(options: BenchRunOptions = {}): Record<string, unknown> {
    const text = b().benchRun(options.filter ?? '', options.quick ?? false, options.large ?? false, options.seconds ?? 0,
      JSON.stringify(options.meta ?? {}), options.onProgress);
    return JSON.parse(text);
  },
  /** A case's input bytes (a copy), so peer libraries can be measured on the same bytes. */
  input(name: string): Uint8Array | undefined {
    return b().benchInput(name);
  },
  /** Runs the scaling gates. */
  gates(filter = '', onProgress?: (name: string) => void): GateResult[] {
    return JSON.parse(b().benchGates(filter, onProgress));
  },
};
