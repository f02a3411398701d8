/**
 * Helpers the CLI shares with the library but which are not public: this module is in no `exports` of
 * package.json, and ESLint lets only src/cli import it.
 */
export { MAX_DEPTH, TOO_DEEP, jsonEqual, limitDepth, parseFieldPath } from './5-informer/fieldChanges.ts';
export { asTraceSource } from './1-transport/trace/reader.ts';
export { traceLineText } from './1-transport/trace/format.ts';
export { trimWindowProblem } from './1-transport/trace/trim.ts';
export { SECRET_NAME_WORDS, execConfigSecrets } from './1-transport/http/secretNames.ts';
