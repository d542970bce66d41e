// GET / and GET /docs: where a person who opens the printed base URL lands. `/` names the
// documentation, the health check and the API; `/docs` lists the pages of docs/ (the same
// Markdown `npm run docs:build` renders into a site), each served as text at /docs/<page>.md.
// Only the files found under docs/ at start are served: a path is looked up, never joined.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { projectPath } from '../paths.ts';

interface DocsPage {
  /** path below docs/, with forward slashes: `api.md`, `decisions/cors.md` */
  file: string;
  title: string;
  text: string;
}

const GENERATED_MARK = /^<!--.*-->\n+/;

function docsPages(root: string): DocsPage[] {
  let entries: string[];
  try {
    entries = readdirSync(root, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return entries
    .map((entry) => entry.split(path.sep).join('/'))
    .filter((file) => file.endsWith('.md') && !file.split('/').some((part) => part.startsWith('.')))
    .sort()
    .map((file) => {
      const text = readFileSync(path.join(root, file), 'utf8');
      const title = /^# (.+)$/m.exec(text.replace(GENERATED_MARK, ''))?.[1] ?? file;
      return { file, title, text };
    });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function section(name: string): string {
  const folder = name.includes('/') ? name.slice(0, name.indexOf('/')) : '';
  return folder === ''
    ? 'Guides'
    : folder === 'reference'
      ? 'Reference (generated)'
      : folder === 'decisions'
        ? 'Decisions'
        : folder === 'spec'
          ? 'Specification'
          : folder;
}

function indexHtml(pages: DocsPage[]): string {
  const groups = new Map<string, DocsPage[]>();
  for (const p of pages) groups.set(section(p.file), [...(groups.get(section(p.file)) ?? []), p]);
  const lists = [...groups]
    .map(
      ([name, list]) =>
        `<h2>${escapeHtml(name)}</h2>\n<ul>\n${list.map((p) => `<li><a href="/docs/${escapeHtml(p.file)}">${escapeHtml(p.title)}</a></li>`).join('\n')}\n</ul>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Royalty engine documentation</title></head>
<body>
<h1>Royalty engine documentation</h1>
<p>The pages of <code>docs/</code> as Markdown (<code>npm run docs:build</code> renders them into a site with search).
Machine-readable: <a href="/docs/llms.txt">llms.txt</a>, <a href="/docs/schemas.json">schemas.json</a>, <a href="/docs/cube-schema.json">cube-schema.json</a>.</p>
${lists}
</body></html>
`;
}

export function docsSiteRoutes(app: FastifyInstance, baseUrl: () => string): void {
  const pages = docsPages(projectPath('docs'));
  const byFile = new Map(pages.map((p) => [p.file, p]));
  const index = indexHtml(pages);

  app.get('/', async (_req, reply) => {
    const base = baseUrl().replace(/\/+$/, '');
    return reply.send({
      name: 'royalty engine',
      docs: `${base}/docs`,
      health: `${base}/trpc/health`,
      api: `${base}/trpc/<namespace>.<procedure>`,
      procedures: `${base}/docs/schemas.json`,
      llms: `${base}/docs/llms.txt`,
    });
  });
  app.get('/docs', async (_req, reply) => reply.type('text/html; charset=utf-8').send(index));
  app.get('/docs/', async (_req, reply) => reply.type('text/html; charset=utf-8').send(index));
  app.get('/docs/*', async (req, reply) => {
    const page = byFile.get((req.params as { '*': string })['*']);
    if (!page)
      return reply.code(404).type('text/plain; charset=utf-8').send('no such page: see /docs\n');
    return reply.type('text/markdown; charset=utf-8').send(page.text);
  });
}
