// lib/query/schema-validator.ts in the CommonJS bundle (tsup.config.ts `SDK_PARTS`): the generated
// validator is dist/sdk-part-validate.cjs, which the package loader compiles with a code cache of
// its own, with the bundle or, where the caller asks (the CLI), here on first use
// (lib/loader/sdk-loader.ts).
import type { QuerySchemaValidator } from '../query/generated/validate.js';
import { loaderHooks } from './hooks';

let validator: QuerySchemaValidator | undefined;

/** The generated validator of schema/query.schema.json. */
export function schemaValidator(): QuerySchemaValidator {
  if (!validator) {
    const hooks = loaderHooks();
    // dist/sdk.cjs runs under dist/index.cjs, which always passes its hooks
    if (!hooks) throw new Error('tetration: dist/sdk.cjs was loaded without dist/index.cjs');
    validator = (hooks.part('validate') as { default: QuerySchemaValidator }).default;
  }
  return validator;
}
