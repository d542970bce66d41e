#!/usr/bin/env node
// The `royalty` command: the compiled command-line client (npm run build makes dist/; `npm install`
// runs it as prepare).
import { main } from '../dist/src/royalty/main.js';

process.exitCode = await main(process.argv);
