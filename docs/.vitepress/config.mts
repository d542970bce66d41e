// The documentation site: `npm run docs:build` renders docs/ into docs/.vitepress/dist with
// VitePress's local search; `npm run docs:dev` serves it while writing. The sidebar is the
// folders of docs/ as they are, so a new page appears without editing this file.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type DefaultTheme } from 'vitepress';

const docs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function title(file: string): string {
  const text = readFileSync(path.join(docs, file), 'utf8');
  return /^# (.+)$/m.exec(text)?.[1]?.replace(/`/g, '') ?? file;
}

function items(folder: string): DefaultTheme.SidebarItem[] {
  return readdirSync(path.join(docs, folder))
    .filter((f) => f.endsWith('.md') && f !== 'index.md')
    .sort()
    .map((f) => {
      const file = path.join(folder, f);
      return { text: title(file), link: `/${file.replace(/\.md$/, '').split(path.sep).join('/')}` };
    });
}

export default defineConfig({
  title: 'Royalty engine',
  description: 'Statement ingestion, catalog and analytics over tRPC',
  cleanUrls: true,
  // links to files that are not pages (the procedure table) are copied as they are
  ignoreDeadLinks: [/\.tsv$/],
  // the pages are plain Markdown: an <id> in prose is text, never an HTML tag, and a { … } that
  // ends a line is an object's shape, not attributes
  markdown: { html: false, attrs: { disable: true } },
  themeConfig: {
    search: { provider: 'local' },
    sidebar: [
      { text: 'Guides', items: items('.') },
      { text: 'Reference (generated)', items: items('reference') },
      { text: 'Specification', items: items('spec') },
      { text: 'Decisions', collapsed: true, items: items('decisions') },
    ],
    outline: 'deep',
  },
});
