// npm run docs:links: every relative link of README.md and docs/**/*.md leads somewhere, offline:
// the file or folder exists, and a #anchor names a heading of the page it points to (GitHub's
// slugs: lower case, punctuation dropped, spaces as hyphens). Links to other sites are not
// fetched. Prints each broken link as file:line and exits 1 when there is one.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The Markdown files checked: README.md and docs/, without the site's build and cache folders. */
function markdownFiles(): string[] {
  const docs = readdirSync(path.join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter(
      (f) =>
        f.endsWith('.md') &&
        !f.split(path.sep).some((part) => part.startsWith('.') || part === 'node_modules'),
    )
    .map((f) => path.join('docs', f));
  return ['README.md', ...docs.sort()];
}

/** The text outside fenced code blocks, line by line (a fenced line is blanked, keeping numbers). */
function proseLines(text: string): string[] {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      return '';
    }
    return fence === null ? line.replace(/`[^`]*`/g, '') : '';
  });
}

export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map<string, Set<string>>();
function anchors(file: string): Set<string> {
  if (!anchorCache.has(file)) {
    const seen = new Map<string, number>();
    const list = new Set<string>();
    let fence = false;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (/^\s*(`{3,}|~{3,})/.test(line)) fence = !fence;
      const m = !fence && /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
      if (!m) continue;
      const base = slug(m[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      list.add(n === 0 ? base : `${base}-${n}`);
    }
    anchorCache.set(file, list);
  }
  return anchorCache.get(file)!;
}

export interface BrokenLink {
  line: number;
  target: string;
  why: string;
}

/** Broken links of one file (a path from the repository's root, or absolute). */
export function brokenLinks(file: string): BrokenLink[] {
  file = path.resolve(root, file);
  const problems: BrokenLink[] = [];
  proseLines(readFileSync(file, 'utf8')).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [pathPart = '', anchor] = target.split('#', 2);
      const resolved =
        pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
      if (!resolved.startsWith(root + path.sep) && resolved !== root) {
        problems.push({ line: i + 1, target, why: 'leads outside the repository' });
      } else if (!existsSync(resolved)) {
        problems.push({ line: i + 1, target, why: 'no such file' });
      } else if (
        anchor !== undefined &&
        statSync(resolved).isFile() &&
        resolved.endsWith('.md') &&
        !anchors(resolved).has(anchor)
      ) {
        problems.push({ line: i + 1, target, why: `no heading #${anchor}` });
      }
    }
  });
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let count = 0;
  const files = markdownFiles();
  for (const f of files) {
    for (const p of brokenLinks(f)) {
      count++;
      console.error(`${f}:${p.line}: ${p.target}: ${p.why}`);
    }
  }
  if (count > 0) {
    console.error(`${count} broken link(s)`);
    process.exit(1);
  }
  console.log(`links checked: ${files.length} files, none broken`);
}
