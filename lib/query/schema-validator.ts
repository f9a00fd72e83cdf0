// The query schema's generated validator (lib/query/generated/validate.js: ajv's standalone code,
// a quarter of the SDK bundle) behind one call. Here it is a plain import (vitest on lib/, the ES
// build); in the CommonJS bundle this module is replaced by lib/loader/validator-part.ts: the
// validator is a part of its own there (tsup.config.ts `SDK_PARTS`), which `tet info`, validating
// no query, never reads or compiles.
import validate from './generated/validate.js';
import type { QuerySchemaValidator } from './generated/validate.js';

/** The generated validator of schema/query.schema.json. */
export function schemaValidator(): QuerySchemaValidator {
  return validate;
}
