// Input pieces shared by the activity, rightsholder and lens procedures. PostgreSQL cannot store
// the NUL character in text or jsonb (it answers with an error, which would be a 500), so text
// that reaches the database is refused with it up front.
import { z } from 'zod';
import { jsonValue } from '../schemas.ts';

const NUL = '\u0000';

export function withoutNul(value: string): boolean {
  return !value.includes(NUL);
}

/** A bounded string without NUL characters. */
export function plainText(max: number) {
  return z.string().max(max).refine(withoutNul, 'must not contain NUL characters');
}

// JSON.stringify writes a NUL as \u0000; an escaped backslash before "u0000" is just text.
const SERIALIZED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/** jsonValue, without NUL characters in its strings or keys. */
export function storableJson(maxBytes?: number, maxDepth?: number) {
  return jsonValue(maxBytes, maxDepth).refine((value) => {
    if (value === undefined) return true;
    let serialized: string;
    try {
      serialized = JSON.stringify(value) ?? '';
    } catch {
      // too deep for JSON.stringify: jsonValue has reported it already, with the field's path
      return true;
    }
    return !SERIALIZED_NUL.test(serialized);
  }, 'must not contain NUL characters');
}
