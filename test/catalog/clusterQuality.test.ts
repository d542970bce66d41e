// Clustering quality on the labelled pairs of fixtures/catalog/title-pairs.tsv: a pair is
// predicted "same" when clusterTitles puts both titles in one cluster, clustered together with a
// few distractors (the decision the clustering itself makes). Precision and recall of "same"
// must both be above 95%; the misses are listed as comments.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { clusterTitles, type TitleItem } from '../../src/catalog/cluster/index.ts';
import { repoRoot } from '../setup/paths.ts';

const DISTRACTORS = ['Summer Nights', 'Love Me Do (Live)', 'Intro', 'Part 3', 'Hello (Remix)'];

t.test('precision and recall of "same" over the labelled title pairs', async (t) => {
  const text = await readFile(path.join(repoRoot, 'fixtures', 'catalog', 'title-pairs.tsv'), 'utf8');
  const pairs = text
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => {
      const [a, b, label, note] = line.split('\t');
      return { a: a!, b: b!, label: label!, note: note ?? '' };
    });
  t.ok(pairs.length >= 350, `${pairs.length} labelled pairs`);
  t.ok(pairs.every((p) => p.a && p.b && (p.label === 'same' || p.label === 'different')), 'every line is a<TAB>b<TAB>same|different<TAB>note');
  const sameCount = pairs.filter((p) => p.label === 'same').length;
  t.ok(sameCount >= 150 && pairs.length - sameCount >= 150, `${sameCount} same, ${pairs.length - sameCount} different`);

  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  const misses: string[] = [];
  for (const p of pairs) {
    const items: TitleItem[] = [
      { id: 'a', title: p.a, artist: null, earnings: '1' },
      { id: 'b', title: p.b, artist: null, earnings: '1' },
      ...DISTRACTORS.map((title, i) => ({ id: `d${i}`, title, artist: null, earnings: '1' })),
    ];
    const clusters = clusterTitles(items);
    const together = clusters.some((c) => c.memberIds.includes('a') && c.memberIds.includes('b'));
    t.equal(clusters.reduce((n, c) => n + c.memberIds.length, 0), items.length, 'every item in exactly one cluster');
    if (together && p.label === 'same') tp++;
    else if (together) {
      fp++;
      misses.push(`false same: ${p.a} | ${p.b} (${p.note})`);
    } else if (p.label === 'same') {
      fn++;
      misses.push(`false different: ${p.a} | ${p.b} (${p.note})`);
    } else tn++;
  }
  const precision = tp / (tp + fp);
  const recall = tp / (tp + fn);
  t.comment(`pairs ${pairs.length}: true same ${tp}, false same ${fp}, false different ${fn}, true different ${tn}`);
  t.comment(`precision ${(precision * 100).toFixed(1)}%, recall ${(recall * 100).toFixed(1)}%`);
  for (const m of misses) t.comment(m);
  t.ok(precision > 0.95, `precision ${precision.toFixed(4)} > 0.95`);
  t.ok(recall > 0.95, `recall ${recall.toFixed(4)} > 0.95`);
});
