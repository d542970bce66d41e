// The shipped reference data, read from fixtures/reference. The seed migration (000006) is
// rendered from these files, and the resolver's rules are read from them at run time.
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { csvRecords, emptyToNull } from './csv.ts';
import { projectPath } from '../paths.ts';

export const referenceDir = projectPath('fixtures', 'reference');

export function readReferenceFile(name: string): string {
  return readFileSync(path.join(referenceDir, name), 'utf8');
}

export interface TaxonomyEntry {
  primarySalesType: string;
  secondarySalesType: string;
  description: string;
}

export interface SeedSalesTypeLookup {
  original: string;
  cleansed: string;
  primarySalesType: string;
  secondarySalesType: string;
}

/** All tokens must appear in the raw string; a trailing `*` matches any token with that prefix. */
export interface SalesTypeRule {
  tokens: string[];
  primarySalesType: string;
  secondarySalesType: string;
  priority: number;
}

export interface GoldRow {
  rawValue: string;
  earningsSource: string | null;
  earningsCategory: string | null;
  parentCompany: string | null;
  collectionSource: string | null;
  publisherSource: string | null;
  notes: string | null;
}

/** Abbreviations too short for phrase matching, as whole tokens, pointing at a gold-data row. */
export interface SourceRule {
  tokens: string[];
  goldRawValue: string;
}

export interface SeedPayor {
  name: string;
  category: string | null;
}

const cache = new Map<string, unknown>();

function cached<T>(key: string, load: () => T): T {
  if (!cache.has(key)) cache.set(key, load());
  return cache.get(key) as T;
}

export function taxonomy(): TaxonomyEntry[] {
  return cached('taxonomy', () =>
    csvRecords(readReferenceFile('sales-types.csv')).map((r) => ({
      primarySalesType: r.primary_sales_type!,
      secondarySalesType: r.secondary_sales_type!,
      description: r.description ?? '',
    })),
  );
}

export function seedSalesTypeLookups(): SeedSalesTypeLookup[] {
  return cached('salesTypeLookups', () =>
    csvRecords(readReferenceFile('sales-type-lookups.csv')).map((r) => ({
      original: r.original!,
      cleansed: r.cleansed!,
      primarySalesType: r.primary_sales_type!,
      secondarySalesType: r.secondary_sales_type!,
    })),
  );
}

export function salesTypeRules(): SalesTypeRule[] {
  return cached('salesTypeRules', () =>
    csvRecords(readReferenceFile('sales-type-rules.csv')).map((r) => ({
      tokens: r.tokens!.split(/\s+/),
      primarySalesType: r.primary_sales_type!,
      secondarySalesType: r.secondary_sales_type!,
      priority: Number.parseInt(r.priority!, 10),
    })),
  );
}

export function seedGoldData(): GoldRow[] {
  return cached('goldData', () =>
    csvRecords(readReferenceFile('source-gold-data.csv')).map((r) => ({
      rawValue: r.raw_value!,
      earningsSource: emptyToNull(r.earnings_source),
      earningsCategory: emptyToNull(r.earnings_category),
      parentCompany: emptyToNull(r.parent_company),
      collectionSource: emptyToNull(r.collection_source),
      publisherSource: emptyToNull(r.publisher_source),
      notes: emptyToNull(r.notes),
    })),
  );
}

export function sourceRules(): SourceRule[] {
  return cached('sourceRules', () =>
    csvRecords(readReferenceFile('source-rules.csv')).map((r) => ({
      tokens: r.tokens!.split(/\s+/),
      goldRawValue: r.gold_raw_value!,
    })),
  );
}

export function seedPayors(): SeedPayor[] {
  return cached('payors', () =>
    csvRecords(readReferenceFile('payors.csv')).map((r) => ({
      name: r.name!,
      category: emptyToNull(r.category),
    })),
  );
}

/** The canonical name a gold row resolves to, in the analytics `source` priority order. */
export function canonicalSourceName(
  row: Pick<GoldRow, 'collectionSource' | 'publisherSource' | 'earningsSource'>,
): string | null {
  return row.collectionSource ?? row.publisherSource ?? row.earningsSource;
}
