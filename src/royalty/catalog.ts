// The server's procedure list, read from its own /docs/schemas.json (generated from the procedure
// declarations), so that `royalty endpoints`, `describe` and `call` know every procedure the server
// has, with its method (query or mutation), scope, minimum role and input schema.
import { readFile } from 'node:fs/promises';
import { UsageError } from './output.ts';

export interface ProcedureEntry {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  summary: string;
  scope: string;
  minRole: string | null;
  deprecated?: string;
  input: JsonSchema;
}

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  [key: string]: unknown;
}

export async function fetchCatalog(url: string): Promise<ProcedureEntry[]> {
  let res: Response;
  try {
    res = await fetch(`${url}/docs/schemas.json`);
  } catch (error) {
    throw new Error(`The server at ${url} does not answer`, { cause: error });
  }
  if (!res.ok) throw new Error(`${url}/docs/schemas.json answered HTTP ${res.status}`);
  const body = (await res.json()) as Record<string, Omit<ProcedureEntry, 'name'>>;
  return Object.entries(body).map(([name, entry]) => ({ name, ...entry }));
}

export function findProcedure(catalog: ProcedureEntry[], name: string): ProcedureEntry {
  const found = catalog.find((p) => p.name === name);
  if (found) return found;
  const near = catalog
    .filter((p) => p.name.toLowerCase().includes(name.toLowerCase().split('.').pop() ?? ''))
    .slice(0, 5);
  throw new UsageError(
    `No procedure ${name}${near.length > 0 ? `; did you mean ${near.map((p) => p.name).join(', ')}?` : ''} (royalty endpoints lists them)`,
  );
}

export function takesOrganization(entry: ProcedureEntry): boolean {
  return entry.input.properties?.organizationId !== undefined;
}

/** A `key=value` value: JSON when it reads as JSON (numbers, true, arrays, objects), else the text. */
function pairValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** `a.b=1 c=x` as `{ a: { b: 1 }, c: "x" }`. */
export function inputFromPairs(pairs: string[]): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw new UsageError(`${pair}: input fields are given as key=value (or --input JSON)`);
    const keys = pair.slice(0, eq).split('.');
    if (keys.some((k) => k === '' || UNSAFE_KEYS.has(k)))
      throw new UsageError(`${pair}: not a field name`);
    let target = input;
    for (const key of keys.slice(0, -1)) {
      const inner = target[key];
      if (
        inner !== undefined &&
        (typeof inner !== 'object' || inner === null || Array.isArray(inner))
      )
        throw new UsageError(`${pair}: ${key} is given twice`);
      target = (target[key] ??= {}) as Record<string, unknown>;
    }
    target[keys.at(-1)!] = pairValue(pair.slice(eq + 1));
  }
  return input;
}

export interface InputOptions {
  input?: string;
  inputFile?: string;
}

/** The input of `royalty call`: --input JSON, --input-file F (- for standard input), or key=value pairs. */
export async function readInput(options: InputOptions, pairs: string[]): Promise<unknown> {
  const given = [
    options.input !== undefined,
    options.inputFile !== undefined,
    pairs.length > 0,
  ].filter(Boolean).length;
  if (given > 1)
    throw new UsageError('Give the input one way: --input, --input-file or key=value pairs');
  let text: string | undefined = options.input;
  if (options.inputFile !== undefined)
    text =
      options.inputFile === '-' ? await readStdin() : await readFile(options.inputFile, 'utf8');
  if (text === undefined) return pairs.length > 0 ? inputFromPairs(pairs) : undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`The input is not JSON: ${(error as Error).message}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
