// Header names of real statements (shared/reference/statement-formats.md), normalized: a row
// made of these is a header. Matching is exact on the normalized name, never by substring, so
// `TRACK ARTIST` does not make `TRACK` a match or the reverse.
import { normalizeHeaderCell } from '../headerHash.ts';

const HEADERS: readonly string[] = [
  // DistroKid (both generations)
  'Date Inserted', 'Reporting Date', 'Sale Month', 'Store', 'Artist', 'Title', 'ISRC', 'UPC', 'Quantity', 'Team Percentage',
  'Song/Album', 'Source Type', 'Country of Sale', 'Songwriter Royalties Withheld', 'Songwriter Royalties Withheld (USD)',
  'Earnings (USD)', 'Recoup (USD)',
  // TuneCore
  'Sales Period', 'Posted Date', 'Store Name', 'Release Type', 'Release Title', 'Song Title', 'Label', 'Optional UPC', 'TC Song ID',
  'Optional ISRC', 'Sales Type', '# Units Sold', 'Per Unit Price', 'Net Sales', 'Net Sales Currency', 'Exchange Rate', 'Total Earned', 'Currency',
  // CD Baby
  'Report Date', 'Sales Date', 'Price', 'Subtotal', 'Isrc', 'Barcode', 'CDBabySku', 'Album Name', 'Artist Name', 'Track Name', 'Partner Name',
  'Transaction Type', 'Delivery Country',
  // Believe
  'Reporting month', 'Sales Month', 'Platform', 'Country / Region', 'Country/Region', 'Label Name', 'Track title', 'Release Catalog nb',
  'Streaming Subscription Type', 'Client Payment Currency', 'Unit Price', 'Mechanical Fee', 'Gross Revenue', 'Client share rate', 'Net Revenue', 'UPC/EAN',
  // The Orchard, legacy
  'Period', 'Activity Period', 'Retailer', 'DMS', 'Territory', 'Product UPC', 'Orchard UPC', 'Manufacturer UPC', 'Project Code', 'Product Code',
  'Subaccount', 'Imprint Label', 'Product Name', 'Track Artist', 'Volume', 'Track', 'Trans Type', 'Trans Type Description', 'Discount', 'Total',
  'Adjusted Total', 'Split Rate', 'Label Share Net Receipts', 'Ringtone Publishing', 'Cloud Publishing', 'Publishing', 'Mech. Administrative Fee',
  'Preferred Currency',
  // The Orchard / AWAL, modern
  'STATEMENT PERIOD', 'ORIGINAL STATEMENT PERIOD', 'ACCOUNT ID', 'CONTRACT ID', 'TRANSACTION DATE', 'SALE COUNTRY', 'SERVICE DETAIL', 'LABEL IMPRINT',
  'PRODUCT ARTIST', 'PRODUCT', 'PRODUCT VERSION', 'DISPLAY UPC', 'TRACK VERSION', 'TRANSACTION SUBTYPE', 'SALE CURRENCY', 'UNIT PRICE SALE CURRENCY',
  'GROSS REVENUE SALE CURRENCY', 'ACCOUNT CURRENCY', 'CURRENCY CONVERSION RATE', 'GROSS REVENUE ACCOUNT CURRENCY', 'MECHANICAL DEDUCTION',
  'NET SHARE ACCOUNT CURRENCY', 'YOUTUBE VIDEO ID', 'SALE START DATE', 'SALE END DATE',
  // Apple
  'Start Date', 'End Date', 'ISRC/ISBN', 'Vendor Identifier', 'Partner Share', 'Extended Partner Share', 'Partner Share Currency', 'Sales or Return',
  'Apple Identifier', 'Artist/Show/Developer/Author', 'Label/Studio/Network/Developer/Publisher', 'Grid', 'Product Type Identifier',
  'ISAN/Other Identifier', 'Pre-order Flag', 'Promo Code', 'Customer Price', 'Customer Currency', 'Provider', 'Provider Country', 'Units',
  'Royalty Price', 'Begin Date', 'Country Code', 'Royalty Currency', 'Storefront Name', 'Total  Royalty Bearing Plays', 'Net Royalty Total',
  // YouTube
  'Adjustment Type', 'Day', 'Country', 'Asset ID', 'Asset Title', 'Asset Labels', 'Asset Channel ID', 'Asset Type', 'Custom ID', 'GRid', 'Album',
  'Administer Publish Rights', 'Owned Views', 'YouTube Revenue Split : Auction', 'YouTube Revenue Split : Reserved',
  'YouTube Revenue Split : Partner Sold YouTube Served', 'YouTube Revenue Split : Partner Sold Partner Served', 'YouTube Revenue Split',
  'Partner Revenue : Auction', 'Partner Revenue : Reserved', 'Partner Revenue : Partner Sold YouTube Served',
  'Partner Revenue : Partner Sold Partner Served', 'Partner Revenue', 'Monetized Views',
  // SoundCloud
  'Artist(s)', 'Partner', 'Release', 'Type', 'Reporting Period', 'Accounting Period', 'Revenue (USD)', 'Revenue Share (%)', 'Split Pay Share (%)',
  // Bandcamp
  'date', 'paid to', 'item type', 'item name', 'artist', 'currency', 'item price', 'quantity', 'discount code', 'sub total', 'transaction fee',
  'fee type', 'item total', 'amount you received', 'bandcamp transaction id', 'paypal transaction id', 'net amount',
  // Beatport, Traxsource
  'PRODUCT_UPC', 'PRODUCT_CATALOGUE_NUMBER', 'TRACK_ISRC_CODE', 'RELEASE', 'TRACK_TITLE', 'TRACK_ARTIST', 'REMIXER_NAME', 'REMIX', 'PURCHASE_STATUS',
  'FORMAT', 'DELIVERY', 'TRANSACTION_DATE', 'CONTENT_TYPE', 'TRACK_COUNT', 'GROSS_CONTENT_REVENUE', 'GROSS_WAV_REVENUE', 'PAID_PRICE',
  'NET_CONTENT_REVENUE', 'NET_WAV_REVENUE', 'MECHANICAL_WITHHOLDING', 'US_TAX_WITHHOLDING', 'Track Title', 'Track Version', 'Qty', 'Amount Due',
  // Revelator
  'Transaction Month', 'Release Catalog ID', 'Service', 'Channel', 'Net Revenue in USD',
  // Cargo
  'Royalty ID', 'Asset ISRC', 'Asset Version', 'Asset Artist', 'Asset Duration', 'Sale net receipts calculation', 'Sale net receipts',
  'Contract deal term', 'Contract Reference', 'Reported Royalty', 'Asset/Product', 'Sale Type', 'Sale User Type', 'Sale Start date', 'Sale End date',
  'Sale Store Name', 'DSP', 'Royalty Calculation Base', 'Product Reference', 'Asset Reference', 'Product Share', 'Asset Share', 'Product Title',
  'Product Artist', 'Product Catalog Number', 'Product Label', 'Sale ID',
  // Vydia, ONErpm, Symphonic, DPM, Sounds.co
  'UID', 'USD Amount', 'Transaction Date', 'Territory Shortcode', 'Balance Adjustment ID', 'ID', 'Net', 'Artists', 'Accounted Date', 'Album/Channel',
  'Source Account', 'Release Name', 'Release Version', 'Release Artists', 'UPC Code', 'Revenue Received By DSP', 'Content-Type', 'ISWC',
  'Catalog Number', 'Release UPC', 'Song ISRC', 'Country Name', 'Platform Name', 'Sale Type Name', 'Sale Reporting Period', 'Sale Quantity',
  // ASCAP
  'DistributionYear', 'Distribution Quarter', 'Statement Recipient ID', 'Statement Recipient Name', 'Party ID', 'Party Name',
  'Legal Earner Party ID', 'Legal Earner Party Name', 'Performance Source/Broadcast Medium', 'Music User Genre', 'Music User', 'Network Service',
  'Performance Start Date', 'Performance End Date', 'Survey Type', 'Day Part Code', 'Series or Film/Attraction', 'Program Name', 'Work ID',
  'Work Title', 'CA%', 'Classification Code', 'Number of Plays', 'Performance Type (Usage)', 'Duration', 'Performing Artist', 'Composer Name',
  'EE Share', 'Credits', 'Dollars', 'Premium Credits', 'Premium Dollars', 'Adjustment Indicator', 'Adjustment Reason Code',
  'Original Distribution Date', 'Role Type', 'Type Of Right', 'Licensor', 'Program Code', 'Performance Quarter', 'File Type', 'Distribution Date',
  'Revenue Class Code', 'Revenue Class Description', '$ Amount',
  // BMI
  'W OR P', 'PARTICIPANT NAME', 'PARTICIPANT #', 'IP #', 'TITLE NAME', 'TITLE #', 'PERF SOURCE', 'COUNTRY OF PERFORMANCE', 'SHOW NAME',
  'EPISODE NAME', 'SHOW #', 'USE CODE', 'TIMING', 'PARTICIPANT %', 'PERF COUNT', 'BONUS LEVEL', 'ROYALTY AMOUNT', 'WITHHOLD', 'PERF PERIOD',
  'CURRENT ACTIVITY AMT', 'HITS SONG OR TV NET SUPER USAGE BONUS', 'STANDARDS OR TV NET THEME BONUS', 'FOREIGN SOCIETY ADJUSTMENT', 'COMPANY CODE',
  'COMPANY NAME', 'PERF DATE', 'ARTISTS', 'Royalty Amt',
  // SoundExchange, PRS, MLC, Songtrust, Kobalt-like, BMG
  'Royalty Item SXID', 'Your Payment Amount', 'Broadcast Start Date', 'Record Number', 'CAE Number', 'Amount (performance revenue)', 'IP1', 'IP2',
  'Usage Narrative', 'Perf Start Date', 'Perf End Date', 'Production', 'Share', 'Number of Perfs', 'Member Name', 'Distribution (posted)',
  'Sender Transaction ID', 'Distributed Amount', 'Recording Title', 'Recording Display Artist Name', 'Member MLC Number', 'Work Payable %',
  'Original Publisher IPI', 'Original Publisher Name', 'Work Writer List', 'DSP Name', 'Consumer Offering', 'Usage Period Start Date',
  'Usage Period End Date', 'Work Primary Title', 'Payee Name', 'MLC Song Code', 'Number of Usages', 'Publisher Royalty Amount',
  'Distribution Identifier', 'Use Type', 'song_name', 'song_code', 'royalty_type', 'amount_received', 'amount', 'start_date', 'territory',
  'BATCH_ID', 'WORK_ID', 'WORK_TITLE', 'RIGHT_TYPE', 'RIGHT_TYPE_GROUP', 'TERRITORY_ISO_ALPHA_2_CODE', 'EXPLOITATION_TITLE', 'EXPLOITATION_ARTIST',
  'DISTRIBUTED_AMOUNT', 'PERCENTAGE_PAID', 'UNIT_SUM', 'CREDIT_OR_DEBIT', 'RECORDING_ARTIST', 'ROYALTY_PERIOD_START_DATE', 'ROYALTY_PERIOD_END_DATE',
  'SOURCE_NAME', 'Statement ID Number', 'Royalty Payable', 'Income Period', 'Royalty Country Code', 'Composers', 'Publisher Name', 'Source Name',
  'Main Income Type Name', 'Song Code', 'Source Code',
  // Sonosuite-style
  'end_date', 'country', 'type', 'units', 'unit_price', 'gross_total', 'net_total', 'channel', 'label', 'display_artist', 'release', 'upc', 'track', 'isrc',
  // Japanese distributors
  '楽曲名', 'アーティスト名', 'サービス名', '利用月', 'アルバム名', 'レーベル名', '数量', '販売単価', '総支払額', '使用料合計', '分配額',
];

const VOCABULARY: ReadonlySet<string> = new Set(HEADERS.map(normalizeHeaderCell));

// Words that header cells of statements carry and data cells rarely do (a weaker signal than the
// vocabulary, used for layouts nobody has catalogued).
const KEYWORDS = [
  'date', 'period', 'month', 'quarter', 'year', 'amount', 'revenue', 'earning', 'royalt', 'units', 'quantity', 'qty', 'isrc', 'upc', 'ean',
  'iswc', 'title', 'artist', 'country', 'territory', 'store', 'retailer', 'platform', 'service', 'currency', 'total', 'net', 'gross', 'price',
  'share', 'rate', 'label', 'release', 'album', 'track', 'song', 'work', 'id', 'code', 'type', 'name', 'number', 'plays', 'streams', 'views',
  'fee', 'tax', 'payable', 'paid', 'sales', 'account', 'writer', 'composer', 'publisher', 'source', 'usage', 'dollars', '%', '#',
];

export function isKnownHeader(cell: string): boolean {
  return VOCABULARY.has(normalizeHeaderCell(cell));
}

export function hasHeaderKeyword(cell: string): boolean {
  const n = normalizeHeaderCell(cell);
  if (n.length > 80) return false;
  for (const k of KEYWORDS) {
    const at = n.indexOf(k);
    if (at < 0) continue;
    // whole words only for the short keywords, so 'id' does not match 'video' or 'paid'
    if (k.length <= 3 && /[a-z]/.test(k)) {
      const before = at === 0 ? ' ' : n[at - 1]!;
      const after = at + k.length >= n.length ? ' ' : n[at + k.length]!;
      if (/[a-z0-9]/.test(before) || /[a-z0-9]/.test(after)) continue;
    }
    return true;
  }
  return false;
}

// What a table that is no royalty statement looks like (checklist L: a catalogue or metadata
// export, a usage report without amounts such as SoundExchange's Reports of Use, a bank
// statement). Rejection needs positive evidence: a header that names money anywhere, or a column
// of numbers whose name says nothing, keeps the table a statement (the mapping decides).

/** Names of money columns, in the languages statements come in (substrings of the lower-cased name). */
const MONEY = [
  'earn', 'revenue', 'royalt', 'amount', 'gross', 'payable', 'payout', 'payment', 'income', 'proceeds', 'receipt', 'share', 'value',
  'price', 'usd', 'eur', 'gbp', 'fee', 'commission', 'credit', 'debit', 'balance', 'cost', 'money', 'cash', 'rate', 'deduct', 'withh', 'tax',
  'recoup', 'advance', 'dollar', 'euro', 'pound', 'yen', 'betrag', 'montant', 'importe', 'ertrag', 'umsatz', 'erlös', 'erlos', 'vergütung',
  'revenu', 'ingreso', 'valor', 'bedrag', 'ricav', 'compens', 'tantiem', 'regalía', 'regalia', 'redevance', 'droits', 'paiement', 'pago',
  '金額', '収益', '印税', '売上', '金额', '收入', '版税', '收益', '금액', '수익', '로열티', '정산', 'сумм', 'доход', 'выручк', 'роялти',
  'вознагражд', 'kwota', 'przych', 'tutar', 'gelir', '$', '€', '£', '¥', '₩', '₹',
];
/** Whole words of money names (`Net`, `Paid`, `Sum`, `Pay`). */
const MONEY_WORDS = new Set(['net', 'paid', 'pay', 'sum', 'due', 'owed', 'eur', 'usd', 'gbp', 'cad', 'aud', 'jpy', 'chf', 'sek', 'nok', 'dkk']);
/** Names of number columns that hold no money: counts, positions, identifiers, times. */
const NOT_MONEY = [
  'track', 'disc', 'volume', 'year', 'duration', 'length', 'time', 'bpm', 'tempo', 'position', 'sequence', 'order', 'index', 'isrc', 'upc',
  'ean', 'gtin', 'iswc', 'ipi', 'cae', 'code', 'number', 'count', 'quantity', 'qty', 'unit', 'stream', 'play', 'performance', 'view',
  'download', 'listen', 'spin', 'rank', 'chart', 'week', 'day', 'month', 'period', 'date', 'age', 'rating', 'popularity', 'score',
  'follower', 'minute', 'second', 'transmission', 'channel', 'identifier', 'catalog', 'barcode', 'zip', 'postal', 'phone',
];
const NOT_MONEY_WORDS = new Set(['id', 'no', 'nr', 'nº', '#', 'ms', 'pos', 'seq', 'vol', 'qty']);
/** Names of a music statement's columns: a bank statement has none of them. */
const MUSIC = ['isrc', 'upc', 'ean', 'iswc', 'title', 'track', 'artist', 'release', 'album', 'song', 'store', 'platform', 'dsp', 'territory', 'country', 'royalt', 'stream', 'label', 'composer', 'writer', 'publisher', 'work'];
const BANK = ['debit', 'credit', 'balance', 'withdrawal', 'deposit', 'transaction', 'description', 'reference', 'payee', 'memo', 'cheque', 'check number', 'iban', 'sort code', 'value date', 'posting date', 'booking date'];

function words(name: string): string[] {
  return name.split(/[^\p{L}\p{N}#º$€£¥₩₹]+/u).filter(Boolean);
}

function namesAny(name: string, parts: readonly string[], whole: ReadonlySet<string> = new Set()): boolean {
  return parts.some((p) => name.includes(p)) || words(name).some((w) => whole.has(w));
}

/**
 * Why the table with this header is no royalty statement, or null when it may be one. `numeric`
 * holds the columns whose values are numbers.
 */
export function notAStatement(header: readonly string[], numeric: ReadonlySet<number>): string | null {
  const names = header.map(normalizeHeaderCell);
  const named = names.filter((n) => n !== '');
  if (named.length === 0) return null;
  const bank = named.filter((n) => BANK.some((b) => n === b || n.startsWith(`${b} `) || n.endsWith(` ${b}`))).length;
  if (bank >= 3 && (named.includes('debit') || named.includes('credit') || named.some((n) => n.includes('balance'))) && !named.some((n) => namesAny(n, MUSIC))) {
    return `It looks like a bank statement (${header.filter((h) => h.trim() !== '').slice(0, 6).join(', ')}), not a royalty statement: upload the statement from the distributor or society.`;
  }
  if (named.some((n) => namesAny(n, MONEY, MONEY_WORDS))) return null;
  for (const j of numeric) {
    const n = names[j] ?? '';
    if (n === '' || !namesAny(n, NOT_MONEY, NOT_MONEY_WORDS)) return null;
  }
  return `No earnings column found: no column names an amount of money and no column of numbers can be one (the columns are ${header.filter((h) => h.trim() !== '').slice(0, 12).join(', ')}${named.length > 12 ? ', ...' : ''}). This looks like a catalogue or metadata export or a usage report, not a royalty statement.`;
}
