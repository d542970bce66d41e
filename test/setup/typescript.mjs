// node --import=./test/setup/typescript.mjs: runs the TypeScript source of a test file (and of
// what it imports) with the least a loader can do.
import { register } from 'node:module';

process.setSourceMapsEnabled(true);
register('./typescriptHooks.mjs', import.meta.url);

// TEST_COST_LOG=<file>: each test process appends what it cost (CPU of its own threads, wall
// time, peak memory) as a JSON line, so a whole run tells which files are worth making cheaper
// (docs/testing.md). Child processes a test starts (the sandbox, a CLI) are not counted.
if (process.env.TEST_COST_LOG) {
  const { appendFileSync } = await import('node:fs');
  const started = Date.now();
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    const line = {
      file: process.argv[1],
      cpuSeconds: Math.round((user + system) / 1e4) / 100,
      wallSeconds: Math.round((Date.now() - started) / 10) / 100,
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
    appendFileSync(process.env.TEST_COST_LOG, JSON.stringify(line) + '\n');
  });
}
