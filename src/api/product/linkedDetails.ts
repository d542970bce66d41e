// The musical details linked to products, as the product procedures answer them: within the
// caller's reach, with their effective values and the source of each link.
import { visibleDetails } from '../../catalog/musicalDetailStore.ts';
import type { Caller, MusicalDetailRecord } from '../../catalog/musicalDetails.ts';
import { linksOfProducts, type ProductLink } from '../../catalog/productStore.ts';
import type { Queryable } from '../../db/pool.ts';

export type LinkedDetail = MusicalDetailRecord & { linkSource: 'auto' | 'user' };

/** The musical details linked to each product, highest USD earnings first. */
export async function linkedDetails(
  db: Queryable,
  caller: Caller,
  productIds: readonly string[],
  blockId: string,
): Promise<Map<string, LinkedDetail[]>> {
  const links = await linksOfProducts(db, productIds);
  const records = links.length
    ? await visibleDetails(db, caller, [...new Set(links.map((l) => l.musicalDetailId))], blockId)
    : [];
  const linksOf = new Map<string, ProductLink[]>();
  for (const link of links)
    linksOf.set(link.musicalDetailId, [...(linksOf.get(link.musicalDetailId) ?? []), link]);
  const out = new Map<string, LinkedDetail[]>(productIds.map((id) => [id, []]));
  // records come highest earnings first, so each product's list is in that order
  for (const r of records)
    for (const link of linksOf.get(r.id) ?? [])
      out.get(link.productId)?.push({ ...r, linkSource: link.source });
  return out;
}
