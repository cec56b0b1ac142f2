// The swagger's `format` values Ajv checks (src/schemas/index.ts), in a module of their own because
// the validators compiled at build time import them by name (scripts/precompile-schemas.mjs).
// Integer formats are enforced, so a number no store column can hold is a 400 on both stores
// instead of a PostgreSQL error; other formats of the swagger (byte, uint64 strings) stay
// unchecked, as before (int64 strings too: a format applies to one JSON type only).
import type { FormatDefinition } from 'ajv';

export const SCHEMA_FORMATS: Record<string, FormatDefinition<number> | FormatDefinition<string>> = {
  int32: { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 },
  int64: { type: 'number', validate: (n: number) => Number.isSafeInteger(n) },
  uint64: { type: 'string', validate: () => true },
  byte: { type: 'string', validate: () => true },
};
