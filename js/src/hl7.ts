// HL7 v2: parse ER7 messages and batches, read values by path, write the stable JSON shape, build
// ACKs, and frame/deframe MLLP — the same C++ core as native quire (docs/hl7v2.md).
import type { EmbindHandle, ErrorRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { Handle } from './handles.js';
import { INTERNAL, checkInternal } from './internal.js';
import { wasm, withInput, type Input } from './module.js';
import { listen } from './listen.js';

/** How messages are read. Limits are typed errors when exceeded; 0 or absent means the default. */
export interface Hl7Options {
  /** Every tolerance becomes a typed error (bad escapes, invalid UTF-8, stray lines, short MSH-2). */
  strict?: boolean;
  /** Largest message in bytes (default 256 MiB): DOCUMENT_TOO_LARGE. */
  maxMessageBytes?: number;
  /** Most segments in one message (default 1,000,000): DOCUMENT_TOO_LARGE. */
  maxSegments?: number;
  /** Largest segment in bytes (default 64 MiB): LINE_TOO_LONG. */
  maxSegmentBytes?: number;
}

/** MSA-1: original mode (AA, AE, AR) and enhanced mode commit acks (CA, CE, CR). */
export type AckCode = 'AA' | 'AE' | 'AR' | 'CA' | 'CE' | 'CR';

/** Where an error is (ERR-2, or ERR-1 for versions 2.1–2.4). */
export interface ErrorLocation {
  segment: string;
  sequence?: number;
  field?: number;
  repetition?: number;
  component?: number;
  subcomponent?: number;
}

/** What an ACK carries besides its code (all optional). */
export interface AckOptions {
  /** MSH-10 of the ACK; default "ACK" + the original MSH-10. */
  controlId?: string;
  /** MSH-7 of the ACK; default the original MSH-7 (pass the time, e.g. "20240131120500"). */
  timestamp?: string;
  /** MSA-3, a text message (escaped). */
  text?: string;
  /** ERR-2 (written for AE, AR, CE, CR only). */
  errorLocation?: ErrorLocation;
  /** ERR-3.1, HL7 table 0357 (default "207", application internal error). */
  errorCode?: string;
  /** ERR-3.2; default the table 0357 text of a known code. */
  errorText?: string;
  /** ERR-4: E error (default), W warning, I information, F fatal. */
  severity?: 'E' | 'W' | 'I' | 'F';
}

/** One value of the JSON shape: text (unescaped, UTF-8), or null for the HL7 explicit null `""`. */
export type Hl7Value = string | null;
/** A component: plain, or an array of subcomponents. */
export type Hl7Component = Hl7Value | Hl7Value[];
/** A repetition: plain, or an array of components. */
export type Hl7Repetition = Hl7Value | Hl7Component[];
/** A field: plain, or an array of repetitions. */
export type Hl7Field = Hl7Value | Hl7Repetition[];

/** The stable JSON shape of a message (docs/hl7v2.md): identical on every target. */
export interface Hl7MessageJson {
  /** MSH-1 followed by MSH-2, as written ("|^~\\&"). */
  delimiters: string;
  /** In order; fields[0] is field 1 (for MSH, MSH-1). Empty trailing parts are dropped. */
  segments: { id: string; fields: Hl7Field[] }[];
}

/** A segment's id, its number of fields and its byte offset in the input. */
export interface Hl7SegmentInfo {
  id: string;
  fields: number;
  offset: number;
}

/** A file or batch: its messages (each its own handle), envelope segments and skipped text. */
export interface Hl7Batch {
  messages: Hl7Message[];
  /** FHS, BHS, BTS and FTS segments, raw, in input order. */
  envelope: string[];
  /** Bytes outside any message that a tolerant read skipped (comments, stray text). */
  skippedBytes: number;
}

/** Counters of an MLLP decoder. */
export interface MllpStats {
  bytesFed: number;
  /** Garbage between frames, frames cut short by a new start byte, dropped oversize frames. */
  skippedBytes: number;
  droppedFrames: number;
  /** Frames that ended with FS not followed by CR (accepted). */
  framesWithoutCr: number;
  bufferedBytes: number;
  inFrame: boolean;
}

export interface MllpOptions {
  /** Largest frame in bytes (default 64 MiB). A larger one is dropped and push() throws FRAME_TOO_LARGE. */
  maxFrameBytes?: number;
}

// --- the bindings (wasm/bind_hl7v2.cpp) --------------------------------------------------------

interface OptionsRecord {
  strict: boolean;
  maxMessageBytes: number;
  maxSegments: number;
  maxSegmentBytes: number;
}

interface HeaderRecord {
  type: string;
  trigger: string;
  structure: string;
  controlId: string;
  processingId: string;
  version: string;
  timestamp: string;
  sendingApplication: string;
  sendingFacility: string;
  receivingApplication: string;
  receivingFacility: string;
  delimiters: string;
  charset: string;
  segmentCount: number;
  skippedLines: number;
  byteLength: number;
  offset: number;
  strict: boolean;
}

interface ValueRecord {
  error: ErrorRecord;
  found: boolean;
  value: string;
}

interface AckRecord {
  code: string;
  controlId: string;
  timestamp: string;
  text: string;
  errorSegment: string;
  errorSequence: number;
  errorField: number;
  errorRepetition: number;
  errorComponent: number;
  errorSubcomponent: number;
  errorCode: string;
  errorText: string;
  severity: string;
}

interface MessageHandle extends EmbindHandle {
  error(): ErrorRecord;
  header(): HeaderRecord;
  get(path: string): ValueRecord;
  getRaw(path: string): ValueRecord;
  segmentsJson(): string;
  toJson(): string;
  ack(options: AckRecord): { error: ErrorRecord; text: string };
  bytes(): Uint8Array;
}

interface BatchHandle extends EmbindHandle {
  error(): ErrorRecord;
  size(): number;
  message(i: number): MessageHandle;
  skippedBytes(): number;
  envelopeJson(): string;
}

interface MllpHandle extends EmbindHandle {
  feed(pointer: number, length: number): { error: ErrorRecord; frames: number };
  take(): { payloads: Uint8Array; lengths: Uint32Array };
  statsJson(): string;
  reset(): void;
}

interface Hl7Bindings {
  hl7Parse(pointer: number, length: number, options: OptionsRecord): MessageHandle;
  Hl7Batch: new (pointer: number, length: number, options: OptionsRecord) => BatchHandle;
  Hl7MllpDecoder: new (maxFrameBytes: number) => MllpHandle;
  hl7MllpEncode(pointer: number, length: number): Uint8Array;
}

function bindings(): Hl7Bindings {
  return wasm('hl7v2') as unknown as Hl7Bindings;
}

function toOptions(o: Hl7Options | undefined): OptionsRecord {
  return { strict: o?.strict ?? false, maxMessageBytes: o?.maxMessageBytes ?? 0, maxSegments: o?.maxSegments ?? 0, maxSegmentBytes: o?.maxSegmentBytes ?? 0 };
}

const ACK_CODES: readonly string[] = ['AA', 'AE', 'AR', 'CA', 'CE', 'CR'];

// --- messages -----------------------------------------------------------------------------------

/**
 * A parsed message held in wasm memory (its bytes and an index of offsets). close() it when done;
 * a finalizer frees it otherwise. Messages of one batch share the batch's bytes, freed with the last.
 */
export class Hl7Message extends Handle<MessageHandle> {
  #header: HeaderRecord | undefined;

  /** @internal */
  constructor(token: typeof INTERNAL, handle: MessageHandle) {
    checkInternal(token, 'Hl7Message', 'hl7.parse()');
    super(handle, 'Hl7Message');
  }

  get #h(): HeaderRecord {
    this.#header ??= this.handle.header();
    return this.#header;
  }

  /** MSH-9.1, e.g. "ADT" ("" when absent). */
  get messageType(): string {
    return this.#h.type;
  }
  /** MSH-9.2, e.g. "A01". */
  get trigger(): string {
    return this.#h.trigger;
  }
  /** MSH-9.3, e.g. "ADT_A01". */
  get structure(): string {
    return this.#h.structure;
  }
  /** MSH-10. */
  get controlId(): string {
    return this.#h.controlId;
  }
  /** MSH-11.1 ("P", "T", "D"). */
  get processingId(): string {
    return this.#h.processingId;
  }
  /** MSH-12.1, e.g. "2.5.1". */
  get version(): string {
    return this.#h.version;
  }
  /** MSH-7.1, as written. */
  get timestamp(): string {
    return this.#h.timestamp;
  }
  /** MSH-3, whole field, raw. */
  get sendingApplication(): string {
    return this.#h.sendingApplication;
  }
  /** MSH-4, whole field, raw. */
  get sendingFacility(): string {
    return this.#h.sendingFacility;
  }
  /** MSH-5, whole field, raw. */
  get receivingApplication(): string {
    return this.#h.receivingApplication;
  }
  /** MSH-6, whole field, raw. */
  get receivingFacility(): string {
    return this.#h.receivingFacility;
  }
  /** MSH-1 followed by MSH-2 ("|^~\\&"). */
  get delimiters(): string {
    return this.#h.delimiters;
  }
  /** The charset MSH-18 names, as quire decodes it: "UTF-8" or "ISO-8859-1". */
  get charset(): string {
    return this.#h.charset;
  }
  get segmentCount(): number {
    return this.#h.segmentCount;
  }
  /** Lines a tolerant read skipped because they were not segments. */
  get skippedLines(): number {
    return this.#h.skippedLines;
  }

  /**
   * The value at a path (`PID-5[2].1`, `OBX[3]-5`, `MSH-9.2`), unescaped and decoded to text;
   * undefined when the message has no such part, "" when it is present and empty. Throws
   * QuireError INVALID_ARGUMENT for a malformed path (and, in strict mode, INVALID_ESCAPE / INVALID_UTF8).
   */
  get(path: string): string | undefined {
    const r = this.handle.get(path);
    if (r.error.code) throw QuireError.fromRecord(r.error);
    return r.found ? r.value : undefined;
  }

  /** The value at a path as written: escapes kept (decoded from the message's charset to text). */
  getRaw(path: string): string | undefined {
    const r = this.handle.getRaw(path);
    if (r.error.code) throw QuireError.fromRecord(r.error);
    return r.found ? r.value : undefined;
  }

  /** Each segment's id, field count and byte offset, in order. */
  segments(): Hl7SegmentInfo[] {
    return JSON.parse(this.handle.segmentsJson()) as Hl7SegmentInfo[];
  }

  /** The message in the stable JSON shape (docs/hl7v2.md) as a plain object. */
  toJSON(): Hl7MessageJson {
    return JSON.parse(this.handle.toJson()) as Hl7MessageJson;
  }

  /** The same as JSON text, byte for byte what native quire writes. */
  toJSONText(): string {
    return this.handle.toJson();
  }

  /**
   * An ACK for this message: MSH with sender and receiver swapped, MSA (code, the original MSH-10,
   * text) and, for AE/AR/CE/CR, ERR. Segments end with CR. Throws QuireError INVALID_ARGUMENT for a
   * bad code or severity.
   */
  ack(code: AckCode = 'AA', options: AckOptions = {}): string {
    if (!ACK_CODES.includes(code)) throw new QuireError('INVALID_ARGUMENT', `INVALID_ARGUMENT: ack code must be one of ${ACK_CODES.join(', ')}`);
    const loc = options.errorLocation;
    const r = this.handle.ack({
      code,
      controlId: options.controlId ?? '',
      timestamp: options.timestamp ?? '',
      text: options.text ?? '',
      errorSegment: loc?.segment ?? '',
      errorSequence: loc?.sequence ?? 1,
      errorField: loc?.field ?? 0,
      errorRepetition: loc?.repetition ?? 0,
      errorComponent: loc?.component ?? 0,
      errorSubcomponent: loc?.subcomponent ?? 0,
      errorCode: options.errorCode ?? '',
      errorText: options.errorText ?? '',
      severity: options.severity ?? '',
    });
    if (r.error.code) throw QuireError.fromRecord(r.error);
    return r.text;
  }

  /** The message's own bytes (from its MSH to the end of its last segment), a copy. */
  bytes(): Uint8Array {
    return this.handle.bytes();
  }
}

function takeMessage(handle: MessageHandle): Hl7Message {
  const err = handle.error();
  if (err.code) {
    handle.delete();
    throw QuireError.fromRecord(err);
  }
  return new Hl7Message(INTERNAL, handle);
}

// --- MLLP ---------------------------------------------------------------------------------------

const utf8 = new TextDecoder();

/**
 * A streaming MLLP decoder: push() chunks of any size, get the complete frames' payloads. Holds at
 * most one partial frame (never more than maxFrameBytes). close() frees it (a finalizer otherwise).
 */
export class MllpDecoder extends Handle<MllpHandle> {
  /** @internal */
  constructor(token: typeof INTERNAL, handle: MllpHandle) {
    checkInternal(token, 'MllpDecoder', 'mllp.decoder()');
    super(handle, 'MllpDecoder');
  }

  /**
   * Feeds a chunk; returns the payloads of the frames it completed, as bytes. When a frame grows
   * past maxFrameBytes it is dropped and this throws QuireError FRAME_TOO_LARGE after the whole
   * chunk was read; frames completed in the same chunk stay queued for the next push() or take().
   */
  pushBytes(chunk: Uint8Array | ArrayBuffer | string): Uint8Array[] {
    const r = withInput(chunk, (pointer, length) => this.handle.feed(pointer, length));
    if (r.error.code) throw QuireError.fromRecord(r.error);
    return this.takeBytes();
  }

  /** As pushBytes(), each payload decoded as UTF-8 text. */
  push(chunk: Uint8Array | ArrayBuffer | string): string[] {
    return this.pushBytes(chunk).map((p) => utf8.decode(p));
  }

  /** The frames completed and not yet returned, as bytes. */
  takeBytes(): Uint8Array[] {
    const { payloads, lengths } = this.handle.take();
    const out: Uint8Array[] = [];
    let at = 0;
    for (const n of lengths) {
      out.push(payloads.subarray(at, at + n));
      at += n;
    }
    return out;
  }

  /** The frames completed and not yet returned, as UTF-8 text. */
  take(): string[] {
    return this.takeBytes().map((p) => utf8.decode(p));
  }

  get stats(): MllpStats {
    return JSON.parse(this.handle.statsJson()) as MllpStats;
  }

  /** Forgets the partial frame, the queued frames and the counters. */
  reset(): void {
    this.handle.reset();
  }
}

/** MLLP framing (Minimal Lower Layer Protocol): VT payload FS CR. */
export const mllp = {
  /** A new streaming decoder. */
  decoder(options?: MllpOptions): MllpDecoder {
    return new MllpDecoder(INTERNAL, new (bindings().Hl7MllpDecoder)(options?.maxFrameBytes ?? 0));
  },
  /** `message` framed for MLLP: 0x0B, its bytes (a string is encoded as UTF-8), 0x1C, 0x0D. */
  encode(message: string | Uint8Array): Uint8Array {
    return withInput(message, (pointer, length) => bindings().hl7MllpEncode(pointer, length));
  },
};

// --- the module ---------------------------------------------------------------------------------

/** The HL7 v2 module. */
export const hl7 = {
  /** Node: HL7 v2 over MLLP into a growing .quire store, as `quire listen` (listen.ts, docs/listen.md). */
  listen,

  /**
   * Parses one message (a string is encoded as UTF-8; pass bytes for other charsets). Throws
   * QuireError: EMPTY_INPUT, INVALID_HL7 (no MSH first; several messages: use parseBatch),
   * DOCUMENT_TOO_LARGE, LINE_TOO_LONG, and in strict mode INVALID_ESCAPE / INVALID_UTF8.
   */
  parse(input: Input, options?: Hl7Options): Hl7Message {
    const b = bindings();
    // The message keeps the heap copy of the input (its index points into it) and frees it itself.
    const handle = withInput(input, (pointer, length) => b.hl7Parse(pointer, length, toOptions(options)), () => true);
    return takeMessage(handle);
  },

  /** Parses a file or batch of messages (with or without FHS/BHS envelopes). Throws as parse() does. */
  parseBatch(input: Input, options?: Hl7Options): Hl7Batch {
    const b = bindings();
    const batch = withInput(input, (pointer, length) => new b.Hl7Batch(pointer, length, toOptions(options)), () => true);
    try {
      const err = batch.error();
      if (err.code) throw QuireError.fromRecord(err);
      const messages: Hl7Message[] = [];
      for (let i = 0, n = batch.size(); i < n; i++) messages.push(new Hl7Message(INTERNAL, batch.message(i)));
      return { messages, envelope: JSON.parse(batch.envelopeJson()) as string[], skippedBytes: batch.skippedBytes() };
    } finally {
      // The messages share the bytes with the batch; they stay alive until the last one is closed.
      batch.delete();
    }
  },
};
