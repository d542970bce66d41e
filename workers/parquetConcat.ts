// Joins Parquet files of one schema into one file without decoding a page: the parts' column
// chunks are copied byte for byte one after the other, and a footer listing every part's row
// groups (their byte offsets moved by where the part now starts) is written after them. The
// normalizer writes a large statement as two parts on two threads and joins them here.
//
// The footer is Thrift's compact protocol. It is read into a generic tree that keeps every field
// with its wire type, so fields this file does not know pass through unchanged; only the row
// count, the row groups and the byte offsets are rewritten.
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { finished } from 'node:stream/promises';

const MAGIC = Buffer.from('PAR1');

// compact protocol wire types
const TRUE = 1;
const FALSE = 2;
const BYTE = 3;
const I16 = 4;
const I32 = 5;
const I64 = 6;
const DOUBLE = 7;
const BINARY = 8;
const LIST = 9;
const SET = 10;
const MAP = 11;
const STRUCT = 12;

interface Field {
  id: number;
  type: number;
  value: Value;
}
type Value =
  | bigint
  | boolean
  | Buffer
  | Field[]
  | { elementType: number; items: Value[] }
  | { keyType: number; valueType: number; entries: [Value, Value][] };

class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}

  byte(): number {
    if (this.pos >= this.buf.length) throw new Error('the Parquet footer ends inside a value');
    return this.buf[this.pos++]!;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw new Error('a varint in the Parquet footer is too long');
    }
  }

  zigzag(): bigint {
    const n = this.varint();
    return (n >> 1n) ^ -(n & 1n);
  }

  value(type: number): Value {
    switch (type) {
      case TRUE:
        return true;
      case FALSE:
        return false;
      case BYTE:
        return BigInt(this.byte());
      case I16:
      case I32:
      case I64:
        return this.zigzag();
      case DOUBLE:
        return this.bytes(8);
      case BINARY:
        return this.bytes(Number(this.varint()));
      case LIST:
      case SET: {
        const head = this.byte();
        const size = head >> 4 === 15 ? Number(this.varint()) : head >> 4;
        const elementType = head & 0x0f;
        const items: Value[] = [];
        // booleans in a list are one byte each: 1 true, 2 false
        for (let i = 0; i < size; i++)
          items.push(
            elementType === TRUE || elementType === FALSE
              ? this.byte() === TRUE
              : this.value(elementType),
          );
        return { elementType, items };
      }
      case MAP: {
        const size = Number(this.varint());
        const types = size > 0 ? this.byte() : 0;
        const entries: [Value, Value][] = [];
        for (let i = 0; i < size; i++)
          entries.push([this.value(types >> 4), this.value(types & 0x0f)]);
        return { keyType: types >> 4, valueType: types & 0x0f, entries };
      }
      case STRUCT:
        return this.struct();
      default:
        throw new Error(`unknown Thrift type ${type} in the Parquet footer`);
    }
  }

  struct(): Field[] {
    const fields: Field[] = [];
    let last = 0;
    for (;;) {
      const head = this.byte();
      if (head === 0) return fields;
      const type = head & 0x0f;
      const id = head >> 4 === 0 ? Number(this.zigzag()) : last + (head >> 4);
      fields.push({ id, type, value: this.value(type) });
      last = id;
    }
  }

  private bytes(n: number): Buffer {
    if (this.pos + n > this.buf.length) throw new Error('the Parquet footer ends inside a value');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

class Writer {
  private chunks: Buffer[] = [];

  out(): Buffer {
    return Buffer.concat(this.chunks);
  }

  byte(b: number): void {
    this.chunks.push(Buffer.from([b]));
  }

  varint(n: bigint): void {
    const bytes: number[] = [];
    let v = n;
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) b |= 0x80;
      bytes.push(b);
    } while (v > 0n);
    this.chunks.push(Buffer.from(bytes));
  }

  zigzag(n: bigint): void {
    this.varint(n >= 0n ? n << 1n : (-n << 1n) - 1n);
  }

  value(type: number, value: Value): void {
    switch (type) {
      case TRUE:
      case FALSE:
        return;
      case BYTE:
        return this.byte(Number(value as bigint) & 0xff);
      case I16:
      case I32:
      case I64:
        return this.zigzag(value as bigint);
      case DOUBLE:
        this.chunks.push(value as Buffer);
        return;
      case BINARY:
        this.varint(BigInt((value as Buffer).length));
        this.chunks.push(value as Buffer);
        return;
      case LIST:
      case SET: {
        const { elementType, items } = value as { elementType: number; items: Value[] };
        if (items.length < 15) this.byte((items.length << 4) | elementType);
        else {
          this.byte(0xf0 | elementType);
          this.varint(BigInt(items.length));
        }
        for (const item of items) {
          if (elementType === TRUE || elementType === FALSE) this.byte(item ? TRUE : FALSE);
          else this.value(elementType, item);
        }
        return;
      }
      case MAP: {
        const { keyType, valueType, entries } = value as {
          keyType: number;
          valueType: number;
          entries: [Value, Value][];
        };
        this.varint(BigInt(entries.length));
        if (entries.length > 0) this.byte((keyType << 4) | valueType);
        for (const [k, v] of entries) {
          this.value(keyType, k);
          this.value(valueType, v);
        }
        return;
      }
      case STRUCT:
        return this.struct(value as Field[]);
      default:
        throw new Error(`unknown Thrift type ${type}`);
    }
  }

  struct(fields: Field[]): void {
    let last = 0;
    for (const f of fields) {
      const delta = f.id - last;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | f.type);
      else {
        this.byte(f.type);
        this.zigzag(BigInt(f.id));
      }
      this.value(f.type, f.value);
      last = f.id;
    }
    this.byte(0);
  }
}

/** Reads a Thrift compact struct (exported for the tests' round trip). */
export function decodeStruct(buf: Buffer): Field[] {
  const reader = new Reader(buf);
  const fields = reader.struct();
  if (reader.pos !== buf.length) throw new Error('bytes left after the Parquet footer');
  return fields;
}

export function encodeStruct(fields: Field[]): Buffer {
  const writer = new Writer();
  writer.struct(fields);
  return writer.out();
}

const field = (fields: Field[], id: number) => fields.find((f) => f.id === id);

// FileMetaData: 2 schema, 3 num_rows, 4 row_groups. RowGroup: 1 columns, 5 file_offset, 7 ordinal.
// ColumnChunk: 2 file_offset, 3 meta_data, 4 offset_index_offset, 6 column_index_offset.
// ColumnMetaData: 9 data_page_offset, 10 index_page_offset, 11 dictionary_page_offset, 14 bloom_filter_offset.
const ROW_GROUP_OFFSETS = [5];
const COLUMN_CHUNK_OFFSETS = [2];
const COLUMN_META_OFFSETS = [9, 10, 11, 14];

/** Moves a struct's offsets by `shift` (an offset of 0 means "not written" and stays 0). */
function shiftOffsets(fields: Field[], ids: number[], shift: bigint): void {
  for (const f of fields)
    if (ids.includes(f.id) && typeof f.value === 'bigint' && f.value > 0n) f.value += shift;
}

function rowGroupsOf(meta: Field[]): Field[][] {
  const groups = field(meta, 4)?.value as { items: Value[] } | undefined;
  return (groups?.items ?? []) as Field[][];
}

async function footerOf(file: string): Promise<{ meta: Field[]; dataEnd: number }> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const tail = Buffer.alloc(8);
    await handle.read(tail, 0, 8, size - 8);
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    if (size < 12 || !tail.subarray(4).equals(MAGIC) || !head.equals(MAGIC))
      throw new Error(`${file} is not a plain Parquet file`);
    const length = tail.readUInt32LE(0);
    const footer = Buffer.alloc(length);
    await handle.read(footer, 0, length, size - 8 - length);
    return { meta: decodeStruct(footer), dataEnd: size - 8 - length };
  } finally {
    await handle.close();
  }
}

/** Writes `out`: the rows of `parts`, in order, as one Parquet file. */
export async function concatParquet(parts: string[], out: string): Promise<void> {
  if (parts.length === 0) throw new Error('no Parquet parts to join');
  const footers = await Promise.all(parts.map(footerOf));
  const schema = (meta: Field[]) => encodeStruct([field(meta, 2)!]);
  const first = footers[0]!.meta;
  const groups: Field[][] = [];
  let rows = 0n;
  let position = 4n;
  for (const [i, { meta, dataEnd }] of footers.entries()) {
    if (!schema(meta).equals(schema(first)))
      throw new Error(`Parquet part ${i + 1} has another schema than the first`);
    const shift = position - 4n;
    for (const group of rowGroupsOf(meta)) {
      shiftOffsets(group, ROW_GROUP_OFFSETS, shift);
      for (const chunk of (field(group, 1)!.value as { items: Value[] }).items as Field[][]) {
        if (field(chunk, 4) || field(chunk, 6))
          throw new Error(
            'Parquet page indexes hold absolute offsets: joining such parts is not supported',
          );
        shiftOffsets(chunk, COLUMN_CHUNK_OFFSETS, shift);
        const columnMeta = field(chunk, 3);
        if (columnMeta) shiftOffsets(columnMeta.value as Field[], COLUMN_META_OFFSETS, shift);
      }
      const ordinal = field(group, 7);
      if (ordinal) ordinal.value = BigInt(groups.length);
      groups.push(group);
    }
    rows += field(meta, 3)!.value as bigint;
    position += BigInt(dataEnd - 4);
  }
  const merged = first.map((f) =>
    f.id === 3
      ? { ...f, value: rows }
      : f.id === 4
        ? { ...f, value: { elementType: STRUCT, items: groups } }
        : f,
  );
  const footer = encodeStruct(merged);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(footer.length, 0);

  const sink = createWriteStream(out);
  const write = (chunk: Buffer) =>
    new Promise<void>((resolve, reject) =>
      sink.write(chunk, (error) => (error ? reject(error) : resolve())),
    );
  try {
    await write(MAGIC);
    for (const [i, part] of parts.entries()) {
      if (footers[i]!.dataEnd <= 4) continue;
      for await (const chunk of createReadStream(part, {
        start: 4,
        end: footers[i]!.dataEnd - 1,
        highWaterMark: 1 << 20,
      }))
        await write(chunk as Buffer);
    }
    await write(footer);
    await write(length);
    await write(MAGIC);
  } finally {
    sink.end();
    await finished(sink);
  }
}
