import { router } from '../../trpc/init.ts';
import { getCluster } from './getCluster.ts';
import { getClustersList } from './getClustersList.ts';
import { getTitleClustering } from './getTitleClustering.ts';
import { getTopClusters } from './getTopClusters.ts';
import { getTopMdsFromBlock } from './getTopMdsFromBlock.ts';
import { updateClustering } from './updateClustering.ts';

export const clusteringRouter = router({
  getCluster,
  getClustersList,
  getTitleClustering,
  getTopClusters,
  getTopMdsFromBlock,
  updateClustering,
});
