// node --import=./test/setup/typescript.mjs: runs the TypeScript source of a test file (and of
// what it imports) with the least a loader can do.
import { register } from 'node:module';

process.setSourceMapsEnabled(true);
register('./typescriptHooks.mjs', import.meta.url);
