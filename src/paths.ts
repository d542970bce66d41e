// Where the project's files are, from wherever this code runs: the TypeScript source (tests,
// `npm run dev`) or the compiled bundle in dist/ (`npm start`). The project root is the nearest
// folder above this module that holds package.json; the data files (migrations, the mapping
// library, reference data) are found from there, never from this module's own depth.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** true when running the TypeScript source through tsx; false in the compiled bundle */
export const fromSource = import.meta.url.endsWith('.ts');

function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

export const projectRoot = findRoot(path.dirname(fileURLToPath(import.meta.url)));

/** A path below the project root: projectPath('sql', 'migrations'). */
export function projectPath(...parts: string[]): string {
  return path.join(projectRoot, ...parts);
}

/**
 * The module of a worker file (workers/<name>.ts): the source itself when running from source,
 * its compiled bundle (dist/workers/<name>.js) otherwise.
 */
export function workerModule(name: string): string {
  return fromSource
    ? projectPath('workers', `${name}.ts`)
    : projectPath('dist', 'workers', `${name}.js`);
}

export function workerModuleUrl(name: string): string {
  return pathToFileURL(workerModule(name)).href;
}
