// A mapping proposed for a statement no mapping matches (status needs_mapping): from the header
// names (synonyms and format fingerprints drawn from the statement-format field notes) and from
// sampled values (ISRC pattern, ISO currency codes, dates and periods, amounts, country codes).
//
// Matching rules that matter for real files:
// - a whole-word match beats a substring match, and a header that is exactly a synonym beats one
//   that merely contains it (The Orchard's `TRACK ARTIST` is not the title; `TRACK` is);
// - earnings prefer the net amount in the account (payout) currency over gross amounts and over
//   amounts in the sale currency (TuneCore: `Total Earned`, not `Net Sales`, whose own
//   `Net Sales Currency` column says it is in another currency);
// - a currency written into the money header (`Earnings (USD)`, `Net Revenue in USD`, `$ Amount`)
//   is a constant when no currency column exists.
import { headerKey, type FieldSpec, type MappingFields, type StandardField } from './fields.ts';
import { fromFileName, normalizeIsrc, normalizeIswc, normalizeUpc, parseCountry, parseCurrency, parseDate, parsePeriod, type Cadence } from './values.ts';

export interface MappingSuggestion {
  fields: MappingFields;
  /** 0..1 per proposed field */
  confidence: Partial<Record<StandardField, number>>;
  /** why each field was proposed */
  reasons: Partial<Record<StandardField, string>>;
  /** the statement family recognised from fingerprint columns, if any */
  distributor: string | null;
}

type ValueKind = 'amount' | 'quantity' | 'period' | 'currency' | 'country' | 'isrc' | 'upc' | 'iswc' | 'percent' | 'text';

interface FieldRule {
  /** synonyms, each with how strongly it names the field */
  phrases: [string, number][];
  /** words that make a header less likely to be the field */
  penalties?: [string, number][];
  kind: ValueKind;
  threshold: number;
}

const MAX_COLUMNS = 2_000;
const MAX_SAMPLE_ROWS = 200;
const MAX_CELL = 300;

// ---------------------------------------------------------------------------------------------
// Header words

const ISO_CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** A currency named in a header's text: `Earnings (USD)`, `Net Revenue in USD`, `USD Amount`, `$ Amount`, `Dollars`. */
export function currencyInHeader(header: string): string | null {
  const patterns = [/\(([A-Z]{3})\)/, /\bin ([A-Z]{3})\b/, /^([A-Z]{3})[\s_]/, /[\s_]([A-Z]{3})$/];
  for (const re of patterns) {
    const m = re.exec(header.trim());
    if (m && ISO_CURRENCIES.has(m[1]!)) return m[1]!;
  }
  if (/(^|[\s(])\$/.test(header) || /\bdollars?\b/i.test(header)) return 'USD';
  if (/€|\beuros?\b/i.test(header)) return 'EUR';
  if (/£|\bpounds? sterling\b/i.test(header)) return 'GBP';
  return null;
}

/** The words of a header: camelCase split (when the header is one word), punctuation dropped, `#`, `%` and `$` kept as words. */
function words(header: string): string[] {
  let h = header.trim();
  if (!/[\s_]/.test(h)) h = h.replace(/([a-z])([A-Z])/g, '$1 $2');
  // the currency of an amount is not part of what the column is
  h = h.replace(/\(([A-Z]{3})\)/g, ' ').replace(/\bin [A-Z]{3}\b/g, ' ');
  return h
    .toLowerCase()
    .replace(/[#%$]/g, (c) => ` ${c} `)
    .split(/[^\p{L}\p{N}#%$]+/u)
    .filter(Boolean);
}

/** A column whose name says it is in the account holder's currency (`…_client_currency`). */
function inClientCurrency(column: { words: string[] }): boolean {
  return containsRun(column.words, ['client', 'currency']);
}

function containsRun(haystack: string[], needle: string[]): boolean {
  if (needle.length === 0 || needle.length > haystack.length) return false;
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

interface NameMatch {
  score: number;
  why: string;
}

/** How well a header's words name a field: exact (1), whole words inside it (0.85), a substring only (0.35); minus penalties. */
function nameScore(hw: string[], rule: FieldRule): NameMatch | null {
  let best = 0;
  let why = '';
  const joined = hw.join(' ');
  for (const [phrase, weight] of rule.phrases) {
    const pw = phrase.split(' ');
    let quality = 0;
    if (hw.length === pw.length && containsRun(hw, pw)) quality = 1;
    else if (containsRun(hw, pw)) quality = 0.85;
    else if (phrase.length >= 4 && joined.replace(/ /g, '').includes(phrase.replace(/ /g, ''))) quality = 0.35;
    if (quality * weight > best) {
      best = quality * weight;
      why = quality === 1 ? `is "${phrase}"` : quality === 0.85 ? `contains the words "${phrase}"` : `contains "${phrase}"`;
    }
  }
  if (best === 0) return null;
  const hits: string[] = [];
  for (const [phrase, amount] of rule.penalties ?? []) {
    if (containsRun(hw, phrase.split(' '))) {
      best -= amount;
      hits.push(phrase);
    }
  }
  return { score: best, why: hits.length > 0 ? `${why}, but says "${hits.join('", "')}"` : why };
}

// ---------------------------------------------------------------------------------------------
// Sampled values

const AMOUNT_RE = /^[-−+]?\(?\s*[-−]?\s*(?:[A-Z]{3}\s*)?[$€£¥]?\s*[-−]?\d[\d,.' ]*(?:[eE][-+]?\d+)?\s*(?:[A-Z]{3})?\)?-?$/;

function isAmount(v: string): boolean {
  return AMOUNT_RE.test(v) && /\d/.test(v);
}

/** The share of a column's non-empty sampled values that read as the kind, or null without samples. */
function valueFit(kind: ValueKind, values: string[]): number | null {
  if (values.length === 0 || kind === 'text') return null;
  const test: (v: string) => boolean = {
    amount: isAmount,
    quantity: (v: string) => isAmount(v),
    percent: (v: string) => isAmount(v.replace(/%$/, '')),
    period: (v: string) => parsePeriod(v) !== null || parseDate(v) !== null,
    currency: (v: string) => /^[A-Za-z]{3}$/.test(v.trim()) && parseCurrency(v) === v.trim().toUpperCase(),
    country: (v: string) => parseCountry(v) !== null || /^(OU|WW|XX|ZZ|EU)$/i.test(v.trim()),
    isrc: (v: string) => normalizeIsrc(v) !== null,
    upc: (v: string) => normalizeUpc(v) !== null || /^"?\d{8,14}"?$/.test(v.trim()),
    iswc: (v: string) => normalizeIswc(v) !== null || /^T[-.\d]{9,}/i.test(v.trim()),
  }[kind];
  return values.filter(test).length / values.length;
}

function numericShare(values: string[]): number {
  return values.length === 0 ? 0 : values.filter(isAmount).length / values.length;
}

// ---------------------------------------------------------------------------------------------
// The field rules

const MONEY_PENALTIES: [string, number][] = [
  ['gross', 0.6],
  ['sale currency', 0.5],
  ['customer', 0.5],
  ['price', 0.6],
  ['unit', 0.3],
  ['per', 0.3],
  ['rate', 0.6],
  ['%', 0.7],
  ['percentage', 0.7],
  ['split', 0.6],
  ['withheld', 0.7],
  ['withholding', 0.7],
  ['withhold', 0.7],
  ['fee', 0.6],
  ['tax', 0.6],
  ['mechanical', 0.5],
  ['deduction', 0.6],
  ['recoup', 0.7],
  ['exchange', 0.7],
  ['conversion', 0.7],
  ['adjustment', 0.5],
  ['bonus', 0.6],
  ['premium', 0.4],
  ['calculation', 0.5],
  ['base', 0.4],
  ['received', 0.2],
  ['wav', 0.2],
  ['current activity', 0.3],
  ['id', 0.6],
  ['code', 0.5],
  ['class', 0.3],
  ['currency', 0.1],
];

const rules: Partial<Record<StandardField, FieldRule>> = {
  royaltyEarnings: {
    kind: 'amount',
    threshold: 0.3,
    phrases: [
      ['net share account currency', 1],
      ['net total client currency', 1],
      ['taxesnet total client currency', 1],
      ['label share net receipts', 1],
      ['total earned', 1],
      ['extended partner share', 1],
      ['your payment amount', 1],
      ['distributed amount', 1],
      ['royalty payable', 1],
      ['partner revenue', 0.95],
      ['royalty amount', 0.95],
      ['royalty amt', 0.95],
      ['reported royalty', 0.95],
      ['net revenue', 0.95],
      ['net content revenue', 0.95],
      ['net amount', 0.95],
      ['net total', 0.9],
      ['net payable', 0.95],
      ['royalty earnings', 1],
      ['net royalty total', 1],
      ['net royalty', 0.95],
      ['net income', 0.95],
      ['amount due', 0.9],
      ['amount paid', 0.9],
      ['paid amount', 0.9],
      ['payment amount', 0.9],
      ['total royalty', 0.9],
      ['$ amount', 0.9],
      ['payout', 0.85],
      ['usd amount', 0.9],
      ['earnings', 0.9],
      ['net receipts', 0.85],
      ['subtotal', 0.8],
      ['proceeds', 0.75],
      ['dollars', 0.75],
      ['royalties', 0.75],
      ['amount', 0.7],
      ['revenue', 0.7],
      ['payable', 0.7],
      ['income', 0.6],
      ['payment', 0.6],
      ['royalty', 0.6],
      ['net', 0.6],
      ['total', 0.4],
    ],
    penalties: MONEY_PENALTIES,
  },
  grossRoyaltyEarnings: {
    kind: 'amount',
    threshold: 0.5,
    phrases: [
      ['gross revenue account currency', 1],
      ['gross content revenue', 0.95],
      ['gross royalty', 0.95],
      ['gross amount', 0.95],
      ['gross earnings', 0.95],
      ['gross revenue', 0.9],
      ['gross total', 0.9],
      ['gross', 0.8],
      ['item total', 0.6],
    ],
    penalties: [
      ['sale currency', 0.5],
      ['customer', 0.5],
      ['unit', 0.5],
      ['price', 0.5],
      ['wav', 0.2],
      ['calculation', 0.5],
    ],
  },
  currency: {
    kind: 'currency',
    threshold: 0.35,
    phrases: [
      ['account currency', 1],
      ['client payment currency', 1],
      ['payment currency', 0.95],
      ['payout currency', 0.95],
      ['statement currency', 0.95],
      ['partner share currency', 0.95],
      ['preferred currency', 0.95],
      ['royalty currency', 0.9],
      ['reporting currency', 0.9],
      ['currency code', 0.9],
      ['currency', 0.9],
      ['ccy', 0.8],
    ],
    penalties: [
      ['sale', 0.5],
      ['sales', 0.4],
      ['customer', 0.5],
      ['local', 0.3],
      ['original', 0.3],
      ['conversion', 0.9],
      ['rate', 0.9],
      ['exchange', 0.9],
      ['revenue', 0.7],
      ['price', 0.7],
      ['amount', 0.7],
      ['total', 0.5],
      ['net', 0.7],
      ['gross', 0.7],
      ['deduction', 0.7],
    ],
  },
  units: {
    kind: 'quantity',
    threshold: 0.45,
    phrases: [
      ['quantity', 1],
      ['units', 1],
      ['units sold', 1],
      ['# units sold', 1],
      ['sale quantity', 0.95],
      ['number of plays', 0.95],
      ['number of perfs', 0.9],
      ['number of usages', 0.9],
      ['performances', 0.9],
      ['spins', 0.85],
      ['qty', 0.9],
      ['streams', 0.9],
      ['perf count', 0.9],
      ['owned views', 0.9],
      ['track count', 0.9],
      ['monetized views', 0.85],
      ['plays', 0.85],
      ['views', 0.8],
      ['unit', 0.6],
      ['count', 0.6],
      ['volume', 0.5],
    ],
    penalties: [
      ['price', 0.6],
      ['rate', 0.6],
      ['%', 0.7],
      ['revenue', 0.7],
      ['amount', 0.6],
      ['share', 0.5],
      ['premium', 0.3],
      ['currency', 0.7],
    ],
  },
  source: {
    kind: 'text',
    threshold: 0.5,
    phrases: [
      ['store', 1],
      ['store name', 1],
      ['sale store name', 1],
      ['platform', 1],
      ['platform name', 1],
      ['retailer', 1],
      ['dsp name', 1],
      ['dms', 0.9],
      ['dsp', 0.85],
      ['partner name', 0.9],
      ['service', 0.8],
      ['music user', 0.8],
      ['perf source', 0.8],
      ['source name', 0.8],
      ['source', 0.7],
      ['partner', 0.6],
    ],
    penalties: [
      ['id', 0.5],
      ['code', 0.4],
      ['detail', 0.3],
      ['type', 0.4],
      ['share', 0.7],
      ['revenue', 0.8],
      ['currency', 0.8],
      ['price', 0.8],
      ['genre', 0.5],
      ['account', 0.5],
    ],
  },
  subSource: {
    kind: 'text',
    threshold: 0.5,
    phrases: [
      ['service detail', 1],
      ['sub source', 1],
      ['subsource', 1],
      ['network service', 0.9],
      ['consumer offering', 0.8],
      ['channel', 0.6],
    ],
    penalties: [['id', 0.6]],
  },
  salesType: {
    kind: 'text',
    threshold: 0.5,
    phrases: [
      ['sales type', 1],
      ['sale type', 1],
      ['transaction type', 0.95],
      ['trans type description', 0.9],
      ['royalty type', 0.9],
      ['income type', 0.9],
      ['usage type', 0.9],
      ['revenue class description', 0.8],
      ['content type', 0.8],
      ['item type', 0.8],
      ['use type', 0.8],
      ['product type identifier', 0.8],
      ['performance source broadcast medium', 0.7],
      ['use code', 0.7],
      ['type', 0.5],
    ],
    penalties: [
      ['id', 0.3],
      ['subscription', 0.3],
      ['release', 0.5],
      ['subtype', 0.5],
      ['adjustment', 0.4],
      ['file', 0.5],
      ['role', 0.5],
      ['asset', 0.3],
    ],
  },
  subSalesType: {
    kind: 'text',
    threshold: 0.55,
    phrases: [
      ['transaction subtype', 1],
      ['sub sales type', 1],
      ['subtype', 0.9],
      ['streaming subscription type', 0.9],
      ['song album', 0.8],
      ['source type', 0.8],
      ['release type', 0.8],
      ['sales or return', 0.8],
      ['sale user type', 0.8],
      ['performance type', 0.7],
      ['trans type', 0.7],
      ['adjustment type', 0.7],
      ['format', 0.6],
    ],
  },
  country: {
    kind: 'country',
    threshold: 0.5,
    phrases: [
      ['country of sale', 1],
      ['sale country', 1],
      ['delivery country', 1],
      ['country of performance', 1],
      ['territory', 0.95],
      ['country code', 0.95],
      ['royalty country code', 0.95],
      ['country region', 0.95],
      ['country', 0.9],
      ['territory shortcode', 0.9],
      ['country name', 0.9],
      ['region', 0.6],
    ],
    penalties: [['deduction', 0.8]],
  },
  typeOfRight: {
    kind: 'text',
    threshold: 0.6,
    phrases: [
      ['type of right', 1],
      ['type of rights', 1],
      ['right type', 1],
      ['rights type', 1],
    ],
  },
  accountNumber: {
    kind: 'text',
    threshold: 0.6,
    phrases: [
      ['account id', 1],
      ['account number', 1],
      ['participant #', 0.9],
      ['member mlc number', 0.9],
      ['party id', 0.8],
      ['payee id', 0.8],
      ['cae number', 0.8],
      ['account', 0.6],
    ],
    penalties: [
      ['name', 0.8],
      ['currency', 0.9],
      ['legal', 0.3],
    ],
  },
  accountName: {
    kind: 'text',
    threshold: 0.6,
    phrases: [
      ['account name', 1],
      ['participant name', 0.9],
      ['payee name', 0.9],
      ['party name', 0.8],
      ['member name', 0.8],
      ['subaccount', 0.7],
    ],
    penalties: [
      ['id', 0.6],
      ['#', 0.6],
      ['legal', 0.3],
    ],
  },
  royaltyRate: {
    kind: 'amount',
    threshold: 0.55,
    phrases: [
      ['royalty rate', 1],
      ['split rate', 0.9],
      ['share rate', 0.9],
      ['client share rate', 0.9],
      ['team percentage', 0.9],
      ['per unit price', 0.8],
      ['unit price', 0.7],
      ['partner share', 0.75],
      ['revenue share', 0.7],
      ['participant %', 0.7],
      ['price', 0.6],
      ['rate', 0.6],
      ['item price', 0.6],
    ],
    penalties: [
      ['extended', 0.8],
      ['conversion', 0.9],
      ['exchange', 0.9],
      ['customer', 0.3],
      ['tax', 0.6],
      ['withholding', 0.7],
      ['paid', 0.3],
      ['pay', 0.3],
      ['currency', 0.5],
      ['sale currency', 0.2],
    ],
  },
  otherAdjustments: {
    // stored as text, but what statements put there are amounts (fees, withholdings, deductions)
    kind: 'amount',
    threshold: 0.55,
    phrases: [
      ['other adjustments', 1],
      ['mechanical fee', 0.9],
      ['mech administrative fee', 0.9],
      ['mechanical deduction', 0.9],
      ['songwriter royalties withheld', 0.9],
      ['adjustment', 0.6],
      ['withheld', 0.6],
    ],
    penalties: [
      ['reason', 0.6],
      ['indicator', 0.6],
      ['type', 0.5],
      ['code', 0.5],
      ['%', 0.5],
      ['foreign society', 0.1],
    ],
  },
  rawTitle: {
    kind: 'text',
    threshold: 0.5,
    phrases: [
      ['track title', 1],
      ['song title', 1],
      ['track name', 1],
      ['song name', 1],
      ['work title', 1],
      ['recording title', 1],
      ['title name', 0.9],
      ['asset title', 0.9],
      ['title', 0.8],
      ['track', 0.8],
      ['song', 0.7],
      ['item name', 0.6],
    ],
    penalties: [
      ['artist', 0.8],
      ['version', 0.6],
      ['release', 0.5],
      ['album', 0.5],
      ['product', 0.3],
      ['id', 0.6],
      ['#', 0.6],
      ['count', 0.6],
      ['isrc', 0.8],
      ['code', 0.5],
      ['type', 0.5],
      ['program', 0.5],
      ['series', 0.5],
    ],
  },
  rawArtist: {
    kind: 'text',
    threshold: 0.5,
    phrases: [
      ['track artist', 1],
      ['artist name', 0.95],
      ['recording display artist name', 1],
      ['performing artist', 0.95],
      ['asset artist', 0.95],
      ['display artist', 0.95],
      ['artist s', 0.95],
      ['artists', 0.9],
      ['artist', 0.9],
      ['artist show developer author', 0.9],
    ],
    penalties: [
      ['product', 0.35],
      ['release', 0.5],
      ['album', 0.5],
      ['label', 0.6],
      ['id', 0.6],
      ['remixer', 0.5],
    ],
  },
  rawReleaseTitle: {
    kind: 'text',
    threshold: 0.5,
    phrases: [
      ['release title', 1],
      ['release name', 1],
      ['album name', 1],
      ['product title', 1],
      ['product name', 0.9],
      ['album', 0.9],
      ['release', 0.8],
      ['product', 0.6],
    ],
    penalties: [
      ['artist', 0.8],
      ['upc', 0.8],
      ['type', 0.7],
      ['id', 0.6],
      ['code', 0.6],
      ['version', 0.5],
      ['catalog', 0.7],
      ['catalogue', 0.7],
      ['reference', 0.6],
      ['label', 0.5],
      ['share', 0.5],
      ['number', 0.5],
    ],
  },
  rawReleaseArtist: {
    kind: 'text',
    threshold: 0.6,
    phrases: [
      ['product artist', 1],
      ['release artist', 1],
      ['album artist', 1],
    ],
  },
  composers: {
    kind: 'text',
    threshold: 0.6,
    phrases: [
      ['composers', 1],
      ['composer name', 1],
      ['composer', 0.9],
      ['writers', 0.9],
      ['work writer list', 0.9],
      ['songwriters', 0.8],
    ],
    penalties: [
      ['royalties', 0.8],
      ['withheld', 0.8],
      ['id', 0.5],
    ],
  },
  isrc: {
    kind: 'isrc',
    threshold: 0.5,
    phrases: [
      ['isrc', 1],
      ['isrc code', 1],
      ['track isrc', 1],
      ['asset isrc', 1],
      ['song isrc', 1],
      ['optional isrc', 0.95],
      ['isrc isbn', 0.95],
    ],
  },
  upc: {
    kind: 'upc',
    threshold: 0.5,
    phrases: [
      ['upc', 1],
      ['upc ean', 1],
      ['product upc', 1],
      ['display upc', 1],
      ['release upc', 1],
      ['barcode', 0.9],
      ['ean', 0.8],
    ],
    penalties: [
      ['optional', 0.2],
      ['manufacturer', 0.3],
    ],
  },
  iswc: { kind: 'iswc', threshold: 0.5, phrases: [['iswc', 1]] },
  otherIdentifier: {
    kind: 'text',
    threshold: 0.5,
    phrases: [
      ['asset id', 0.8],
      ['apple identifier', 0.8],
      ['tc song id', 0.8],
      ['work id', 0.8],
      ['title #', 0.8],
      ['royalty item sxid', 0.8],
      ['release catalog nb', 0.7],
      ['release catalog id', 0.7],
      ['contract id', 0.7],
      ['song code', 0.7],
      ['royalty id', 0.6],
      ['cdbaby sku', 0.7],
      ['sender transaction id', 0.6],
      ['transaction id', 0.5],
      ['catalogue number', 0.6],
      ['catalog number', 0.6],
      ['identifier', 0.5],
    ],
    penalties: [
      ['channel', 0.5],
      ['vendor', 0.3],
    ],
  },
  taxDeduction: {
    kind: 'percent',
    threshold: 0.6,
    phrases: [
      ['tax withholding percentage', 0.9],
      ['withholding tax %', 0.9],
      ['tax rate', 0.8],
    ],
  },
};

const STMT_PERIOD_RULE: FieldRule = {
  kind: 'period',
  threshold: 0.3,
  phrases: [
    ['statement period', 1],
    ['statement run name', 0.95],
    ['statement date', 0.95],
    ['statement month', 0.95],
    ['reporting date', 0.95],
    ['reporting month', 0.95],
    ['accounting period', 0.95],
    ['posted date', 0.9],
    ['report date', 0.9],
    ['distribution date', 0.9],
    ['period', 0.9],
    ['reporting period', 0.8],
    ['payment date', 0.8],
    ['accounted date', 0.8],
    ['end date', 0.7],
    ['transaction date', 0.6],
    ['date', 0.5],
    ['day', 0.5],
    ['month', 0.5],
  ],
  penalties: [
    ['sale', 0.25],
    ['sales', 0.25],
    ['activity', 0.4],
    ['usage', 0.4],
    ['perf', 0.4],
    ['performance', 0.4],
    ['original', 0.5],
    ['transaction', 0.2],
    ['start', 0.05],
    ['inserted', 0.2],
    ['release', 0.6],
    ['part', 0.3],
    ['code', 0.3],
  ],
};

const SALES_PERIOD_RULE: FieldRule = {
  kind: 'period',
  threshold: 0.5,
  phrases: [
    ['sale month', 0.95],
    ['sales month', 0.95],
    ['sales period', 0.95],
    ['sale period', 0.95],
    ['activity period', 0.9],
    ['transaction month', 0.9],
    ['sales date', 0.9],
    ['sale date', 0.9],
    ['usage period', 0.9],
    ['perf period', 0.9],
    ['performance period', 0.9],
    ['transaction date', 0.8],
    ['reporting period', 0.7],
  ],
};
const SALES_START_RULE: FieldRule = {
  kind: 'period',
  threshold: 0.6,
  phrases: [
    ['sale start date', 1],
    ['performance start date', 1],
    ['usage period start date', 1],
    ['perf start date', 1],
    ['period start', 0.9],
    ['start date', 0.8],
    ['begin date', 0.8],
  ],
};
const SALES_END_RULE: FieldRule = {
  kind: 'period',
  threshold: 0.6,
  phrases: [
    ['sale end date', 1],
    ['performance end date', 1],
    ['usage period end date', 1],
    ['perf end date', 1],
    ['period end', 0.9],
    ['end date', 0.8],
  ],
};

/**
 * Statement families recognised by columns only they have (the fingerprints of the field notes),
 * with the currency they pay in when the file does not say.
 */
/** Earnings columns (by headerKey) whose payor puts a row's amount in another column when they are empty. */
const EARNINGS_FALLBACKS = new Map<string, string[]>([
  [headerKey('ROYALTY AMOUNT'), [headerKey('CURRENT ACTIVITY AMT')]],
  [headerKey('Royalty Amt'), [headerKey('CURRENT ACTIVITY AMT')]],
]);

const FINGERPRINTS: { distributor: string; columns: string[]; currency?: string; cadence?: Cadence; source?: string; payor?: string }[] = [
  { distributor: 'DistroKid', columns: ['Team Percentage', 'Song/Album'] },
  { distributor: 'DistroKid', columns: ['Team Percentage', 'Source Type', 'Earnings (USD)'] },
  { distributor: 'TuneCore', columns: ['TC Song ID', 'Total Earned'] },
  { distributor: 'CD Baby', columns: ['CDBabySku'], currency: 'USD' },
  { distributor: 'CD Baby', columns: ['Partner Name', 'Transaction Type', 'Delivery Country'], currency: 'USD' },
  { distributor: 'Believe', columns: ['Release Catalog nb', 'Client Payment Currency'] },
  { distributor: 'The Orchard', columns: ['Label Share Net Receipts'] },
  { distributor: 'The Orchard', columns: ['NET SHARE ACCOUNT CURRENCY', 'ORIGINAL STATEMENT PERIOD'] },
  { distributor: 'AWAL', columns: ['NET SHARE ACCOUNT CURRENCY', 'ACCOUNT ID', 'CONTRACT ID'] },
  { distributor: 'Apple', columns: ['Extended Partner Share', 'Partner Share Currency'], source: 'Apple' },
  { distributor: 'YouTube', columns: ['Asset ID', 'Partner Revenue'], currency: 'USD', source: 'YouTube' },
  { distributor: 'SoundCloud', columns: ['Revenue Share (%)', 'Split Pay Share (%)'] },
  { distributor: 'Bandcamp', columns: ['bandcamp transaction id'], source: 'Bandcamp' },
  { distributor: 'Beatport', columns: ['TRACK_ISRC_CODE', 'NET_CONTENT_REVENUE'], currency: 'USD', source: 'Beatport' },
  { distributor: 'Revelator', columns: ['Net Revenue in USD', 'Release Catalog ID'] },
  { distributor: 'Cargo Records', columns: ['Royalty ID', 'Asset ISRC', 'Reported Royalty'], cadence: 'Q' },
  { distributor: 'Vydia', columns: ['Balance Adjustment ID'] },
  { distributor: 'ONErpm', columns: ['Album/Channel', 'Source Account'] },
  { distributor: 'ASCAP', columns: ['Statement Recipient Name', 'Party Name'], currency: 'USD', cadence: 'Q', payor: 'ASCAP' },
  { distributor: 'BMI', columns: ['STANDARDS OR TV NET THEME BONUS'], currency: 'USD', cadence: 'Q', payor: 'BMI' },
  { distributor: 'BMI', columns: ['PARTICIPANT #', 'PERF SOURCE'], currency: 'USD', cadence: 'Q', payor: 'BMI' },
  { distributor: 'SoundExchange', columns: ['Royalty Item SXID'], currency: 'USD', payor: 'SoundExchange' },
  { distributor: 'PRS for Music', columns: ['CAE Number', 'Amount (performance revenue)'], currency: 'GBP', payor: 'PRS for Music' },
  { distributor: 'The MLC', columns: ['Member MLC Number'], currency: 'USD', payor: 'The MLC' },
  { distributor: 'Songtrust', columns: ['royalty_type', 'amount_received'], currency: 'USD' },
  { distributor: 'Sonosuite', columns: ['currency_rate', 'gross_total_client_currency'] },
  { distributor: 'BMG', columns: ['Royalty Country Code', 'Income Period'] },
];

// ---------------------------------------------------------------------------------------------
// The suggestion

interface Column {
  index: number;
  /** the header cell as the mapping names it */
  name: string;
  words: string[];
  values: string[];
}

interface Candidate {
  column: Column;
  score: number;
  why: string;
}

const round = (n: number) => Math.round(Math.max(0, Math.min(1, n)) * 100) / 100;

function sampleNote(kind: ValueKind, values: string[], fit: number | null): string {
  if (fit === null) return '';
  const label: Record<ValueKind, string> = {
    amount: 'amounts',
    quantity: 'numbers',
    percent: 'numbers',
    period: 'dates or periods',
    currency: 'ISO currency codes',
    country: 'country codes or names',
    isrc: 'ISRCs',
    upc: 'UPC/EAN codes',
    iswc: 'ISWCs',
    text: 'text',
  };
  return `; ${Math.round(fit * values.length)}/${values.length} sampled values are ${label[kind]}`;
}

/** Scores every column for a rule, sampled values confirming or vetoing what the name says. */
function candidates(columns: Column[], rule: FieldRule, used: Set<number> = new Set()): Candidate[] {
  const out: Candidate[] = [];
  for (const column of columns) {
    if (used.has(column.index)) continue;
    const match = nameScore(column.words, rule);
    if (!match) continue;
    let score = match.score;
    const fit = valueFit(rule.kind, column.values);
    if (fit !== null) {
      if (fit >= 0.8) score *= 1.1;
      else if (fit < 0.5) score *= fit > 0 ? 0.6 : 0.2;
    } else if (rule.kind === 'text' && column.values.length >= 3 && numericShare(column.values) === 1) {
      score *= 0.6;
    }
    if (score >= rule.threshold) {
      out.push({ column, score, why: `header "${column.name}" ${match.why}${sampleNote(rule.kind, column.values, fit)}` });
    }
  }
  return out.sort((a, b) => b.score - a.score || a.column.index - b.column.index);
}

/** Columns whose sampled values are clearly of a kind, whatever their header says. */
function valueOnly(columns: Column[], kind: ValueKind, used: Set<number>): Candidate | null {
  for (const column of columns) {
    if (used.has(column.index) || column.values.length < 2) continue;
    const fit = valueFit(kind, column.values);
    if (fit !== null && fit >= 0.9) {
      return { column, score: 0.5, why: `${sampleNote(kind, column.values, fit).slice(2)} (header "${column.name}" says nothing)` };
    }
  }
  return null;
}

function dominantCadence(values: string[]): Cadence | null {
  const counts = new Map<Cadence, number>();
  for (const v of values) {
    const p = parsePeriod(v);
    if (p) counts.set(p.cadence, (counts.get(p.cadence) ?? 0) + 1);
  }
  let best: Cadence | null = null;
  for (const [c, n] of counts) if (best === null || n > counts.get(best)!) best = c;
  return best;
}

export function suggestMapping(header: string[], sampleRows: string[][], fileName: string): MappingSuggestion {
  const fields: MappingFields = {};
  const confidence: Partial<Record<StandardField, number>> = {};
  const reasons: Partial<Record<StandardField, string>> = {};
  const set = (field: StandardField, spec: FieldSpec, score: number, why: string) => {
    fields[field] = spec;
    confidence[field] = round(score);
    reasons[field] = why;
  };

  const rows = sampleRows.slice(0, MAX_SAMPLE_ROWS);
  const columns: Column[] = [];
  const seen = new Set<string>();
  header.slice(0, MAX_COLUMNS).forEach((cell, index) => {
    const name = typeof cell === 'string' ? cell.trim() : '';
    const key = headerKey(name);
    // a mapping names a column by its header cell: blank, over-long and repeated cells cannot be named
    if (name === '' || name.length > MAX_CELL || seen.has(key)) return;
    seen.add(key);
    const values = rows
      .map((r) => (Array.isArray(r) && typeof r[index] === 'string' ? r[index].trim() : ''))
      .filter((v) => v !== '' && v.length <= 200);
    columns.push({ index, name, words: words(name), values });
  });
  const byKey = new Map(columns.map((c) => [headerKey(c.name), c]));
  const used = new Set<number>();
  const take = (c: Column) => used.add(c.index);

  const fingerprint = FINGERPRINTS.find((f) => f.columns.every((c) => byKey.has(headerKey(c)))) ?? null;

  // 1. earnings: the net amount in the payout currency
  const currencyColumns = candidates(columns, rules.currency!);
  const money = candidates(columns, rules.royaltyEarnings!).map((c) => {
    // "Net Sales" next to "Net Sales Currency" is in its own (sale) currency when another currency column exists
    const own = byKey.get(`${headerKey(c.column.name)} currency`);
    if (own && currencyColumns.some((k) => k.column.index !== own.index)) {
      return { ...c, score: c.score - 0.35, why: `${c.why}; its own "${own.name}" column puts it in another currency than the payout` };
    }
    // an amount "in the client's currency" beats its twin in the sale currency (Sonosuite's net_total)
    if (inClientCurrency(c.column)) return { ...c, score: c.score + 0.15, why: `${c.why}; it is in the account holder's currency` };
    return c;
  });
  money.sort((a, b) => b.score - a.score || a.column.index - b.column.index);
  const earnings = money[0] && money[0].score >= rules.royaltyEarnings!.threshold ? money[0] : null;
  if (earnings) {
    // a payor that fills one of two amount columns per row (BMI: ROYALTY AMOUNT, else CURRENT
    // ACTIVITY AMT): the first that is not empty, never both added
    const fallback = (EARNINGS_FALLBACKS.get(headerKey(earnings.column.name)) ?? []).map((k) => byKey.get(k)).find((c) => c !== undefined && !used.has(c.index));
    if (fallback) {
      set('royaltyEarnings', { columns: [earnings.column.name, fallback.name], pick: 'first' }, earnings.score, `${earnings.why}; else "${fallback.name}" where it is empty (the payor fills one of the two)`);
      take(fallback);
    } else {
      set('royaltyEarnings', { column: earnings.column.name }, earnings.score, earnings.why);
    }
    take(earnings.column);
  }
  const gross = candidates(columns, rules.grossRoyaltyEarnings!, used)[0];
  if (gross) {
    set('grossRoyaltyEarnings', { column: gross.column.name }, gross.score, gross.why);
    take(gross.column);
  }

  // 2. currency: a column, else the money header's text, else the family's, else the values' symbols or the file name
  const pairedPrefix = (c: Candidate) => {
    const prefix = c.column.words.filter((w) => w !== 'currency').join(' ');
    return prefix !== '' && earnings !== null && ` ${earnings.column.words.join(' ')} `.includes(` ${prefix} `);
  };
  const currencyPick = currencyColumns
    .filter((c) => !used.has(c.column.index))
    .map((c) => (pairedPrefix(c) ? { ...c, score: c.score + 0.3, why: `${c.why}; it names the currency of "${earnings!.column.name}"` } : c))
    .sort((a, b) => b.score - a.score || a.column.index - b.column.index)[0];
  const headerCurrency = earnings ? currencyInHeader(earnings.column.name) : null;
  const valueCurrency = currencyPick ? null : valueOnly(columns, 'currency', used);
  // "<earnings header> Currency" names exactly the currency of the amounts taken
  const ownCurrency = earnings ? byKey.get(`${headerKey(earnings.column.name)} currency`) : undefined;
  if (ownCurrency && !used.has(ownCurrency.index)) {
    set('currency', { column: ownCurrency.name }, 0.9, `header "${ownCurrency.name}" names the currency of "${earnings!.column.name}"`);
    take(ownCurrency);
  } else if (earnings && inClientCurrency(earnings.column) && !(currencyPick && inClientCurrency(currencyPick.column))) {
    // Sonosuite: `currency` is the sale currency; the client's, which the amounts are in, is named nowhere
    set('currency', { variable: 'currency' }, 0.5, `"${earnings.column.name}" is in the account holder's currency, which no column names: give it with the upload (variable "currency")`);
  } else if (currencyPick) {
    set('currency', { column: currencyPick.column.name }, currencyPick.score, currencyPick.why);
    take(currencyPick.column);
  } else if (headerCurrency) {
    set('currency', { constant: headerCurrency }, 0.9, `the earnings header "${earnings!.column.name}" names ${headerCurrency}`);
  } else if (valueCurrency) {
    set('currency', { column: valueCurrency.column.name }, valueCurrency.score, valueCurrency.why);
    take(valueCurrency.column);
  } else if (fingerprint?.currency) {
    set('currency', { constant: fingerprint.currency }, 0.8, `${fingerprint.distributor} statements are paid in ${fingerprint.currency} and carry no currency column`);
  } else {
    const symbol = earnings?.column.values.map((v) => /[$€£]/.exec(v)?.[0]).find((s) => s !== undefined);
    const fromName = fromFileName(fileName, 'currency');
    if (symbol) set('currency', { constant: parseCurrency(symbol)! }, 0.6, `the sampled earnings carry the symbol ${symbol}`);
    else if (fromName) set('currency', { fromFileName: 'currency' }, 0.5, `the file name names ${fromName}`);
    else set('currency', { variable: 'currency' }, 0.1, 'nothing in the file names the currency: give it with the upload (variable "currency")');
  }

  // 3. the statement period: a year column with a quarter/month column, else one period column, else the file name
  const yearColumn = columns.find((c) => !used.has(c.index) && c.words.at(-1) === 'year' && c.words.length <= 3);
  let pair: { year: Column; period: Column; cadence: Cadence; score: number } | null = null;
  if (yearColumn) {
    const prefix = yearColumn.words.slice(0, -1);
    for (const c of columns) {
      if (c === yearColumn || used.has(c.index)) continue;
      const last = c.words.at(-1);
      const cadence: Cadence | null = last === 'quarter' ? 'Q' : last === 'month' ? 'M' : last === 'half' ? 'H' : null;
      if (!cadence || c.words.slice(0, -1).join(' ') !== prefix.join(' ')) continue;
      const penalty = nameScore(prefix.length > 0 ? [...prefix, 'period'] : ['period'], STMT_PERIOD_RULE);
      pair = { year: yearColumn, period: c, cadence, score: Math.min(1, (penalty?.score ?? 0.9) + 0.05) };
      break;
    }
  }
  const periodPick = candidates(columns, STMT_PERIOD_RULE, used)[0];
  if (pair && (!periodPick || pair.score >= periodPick.score)) {
    const why = `"${pair.year.name}" holds the year and "${pair.period.name}" the ${pair.cadence === 'Q' ? 'quarter' : pair.cadence === 'M' ? 'month' : 'half'}`;
    set('stmtYear', { column: pair.year.name }, pair.score, why);
    set('stmtPeriod', { column: pair.period.name }, pair.score, why);
    set('stmtCadence', { constant: pair.cadence }, pair.score, why);
    take(pair.year);
    take(pair.period);
  } else if (periodPick) {
    const col = periodPick.column;
    const sampled = dominantCadence(col.values);
    const named: Cadence | null = col.words.includes('quarter') ? 'Q' : col.words.includes('month') ? 'M' : null;
    const family = fingerprint?.cadence ?? null;
    // a family that states quarterly reads its dates as the quarter they fall in
    const cadence = sampled === 'M' && family ? family : (sampled ?? named ?? family ?? 'M');
    const datesWidened = cadence !== 'M' && (sampled === 'M' || (sampled === null && col.words.includes('date')));
    const widen = { Q: 'quarter', H: 'half', Y: 'year', M: 'month' } as const;
    const spec: FieldSpec = datesWidened ? { column: col.name, format: widen[cadence] } : { column: col.name };
    set('stmtYear', spec, periodPick.score, periodPick.why);
    set('stmtPeriod', { ...spec }, periodPick.score, periodPick.why);
    const cadenceWhy =
      cadence === family && sampled !== cadence
        ? `${fingerprint!.distributor} statements are ${cadence === 'Q' ? 'quarterly' : `of cadence ${cadence}`}`
        : sampled
          ? `the sampled values of "${col.name}" are ${cadence === 'M' ? 'months or dates' : `periods of cadence ${cadence}`}`
          : named
            ? `"${col.name}" names the cadence`
            : 'assumed monthly: nothing says otherwise';
    set('stmtCadence', { constant: cadence }, sampled || family ? 0.9 : named ? 0.7 : 0.4, cadenceWhy);
    take(col);
  } else {
    const fromName = fromFileName(fileName, 'period');
    const score = fromName ? 0.6 : 0.2;
    const why = fromName ? `no period column; the file name holds the period ${fromName}` : 'no period column: the period must be in the file name';
    set('stmtYear', { fromFileName: 'period' }, score, why);
    set('stmtPeriod', { fromFileName: 'period' }, score, why);
    set('stmtCadence', { fromFileName: 'period' }, score, why);
  }
  const stmtColumn = fields.stmtYear?.column;
  const stmtCol = stmtColumn === undefined ? undefined : byKey.get(headerKey(stmtColumn));

  // 4. the sales period: a start/end pair (the statement's own date column may be one of them),
  // else one sales-period column, else the statement's column when it dates each sale
  const usedButStmt = new Set([...used].filter((i) => i !== stmtCol?.index));
  const start = candidates(columns, SALES_START_RULE, usedButStmt)[0];
  const end = candidates(columns, SALES_END_RULE, usedButStmt)[0];
  if (start && end && start.column !== end.column) {
    set('salesPeriodStart', { column: start.column.name }, start.score, start.why);
    set('salesPeriodEnd', { column: end.column.name }, end.score, end.why);
    take(start.column);
    take(end.column);
  } else {
    const sales = candidates(columns, SALES_PERIOD_RULE, used)[0];
    if (sales) {
      set('salesPeriodStart', { column: sales.column.name }, sales.score, sales.why);
      set('salesPeriodEnd', { column: sales.column.name }, sales.score, sales.why);
      take(sales.column);
    } else if (stmtCol && !pair && !stmtCol.words.some((w) => ['distribution', 'statement', 'report', 'reporting', 'posted', 'accounting', 'period'].includes(w))) {
      const why = `no separate sales period: the statement's "${stmtColumn}" dates the sales`;
      set('salesPeriodStart', { column: stmtColumn }, 0.4, why);
      set('salesPeriodEnd', { column: stmtColumn }, 0.4, why);
    }
  }

  // 5. everything else, best matches first, one column per field
  const rest: { field: StandardField; candidate: Candidate }[] = [];
  for (const [field, rule] of Object.entries(rules) as [StandardField, FieldRule][]) {
    if (fields[field] || ['royaltyEarnings', 'grossRoyaltyEarnings', 'currency'].includes(field)) continue;
    for (const candidate of candidates(columns, rule, used)) rest.push({ field, candidate });
  }
  for (const kind of ['isrc', 'country'] as const) {
    const field: StandardField = kind;
    if (!rest.some((r) => r.field === field)) {
      const byValue = valueOnly(columns, kind, used);
      if (byValue) rest.push({ field, candidate: byValue });
    }
  }
  rest.sort((a, b) => b.candidate.score - a.candidate.score || a.candidate.column.index - b.candidate.column.index);
  for (const { field, candidate } of rest) {
    if (fields[field] || used.has(candidate.column.index)) continue;
    set(field, { column: candidate.column.name }, candidate.score, candidate.why);
    take(candidate.column);
  }

  // 6. what the family itself says: the store it is, the payor it is
  if (fingerprint?.source && !fields.source) set('source', { constant: fingerprint.source }, 0.8, `${fingerprint.distributor} statements are its own store's sales`);
  if (fingerprint?.payor && !fields.payor) set('payor', { constant: fingerprint.payor }, 0.8, `${fingerprint.payor} pays the whole statement`);

  return { fields, confidence, reasons, distributor: fingerprint?.distributor ?? null };
}
