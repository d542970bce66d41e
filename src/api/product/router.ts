import { router } from '../../trpc/init.ts';
import { getAllMusicalDetailsForProduct } from './getAllMusicalDetailsForProduct.ts';
import { getByBlock } from './getByBlock.ts';
import { getById } from './getById.ts';
import { getMusicalDetailsBatch } from './getMusicalDetailsBatch.ts';
import { getMusicalDetailsByBlock } from './getMusicalDetailsByBlock.ts';
import { getProductsByIds } from './getProductsByIds.ts';
import { updateById } from './updateById.ts';
import { updateProductMusicalDetailsRelationships } from './updateProductMusicalDetailsRelationships.ts';

export const productRouter = router({
  getAllMusicalDetailsForProduct,
  getByBlock,
  getById,
  getMusicalDetailsBatch,
  getMusicalDetailsByBlock,
  getProductsByIds,
  updateById,
  updateProductMusicalDetailsRelationships,
});
