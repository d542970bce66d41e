// The root router: a table of namespaces. Procedure names are exactly those of procedures.tsv.
import { router } from '../trpc/init.ts';
import { activityRouter } from './activity/router.ts';
import { apiKeyRouter } from './apiKey/router.ts';
import { chatRouter } from './chat/router.ts';
import { clusteringRouter } from './clustering/router.ts';
import { cubeRouter } from './cube/router.ts';
import { dataFreshnessRouter } from './dataFreshness/router.ts';
import { distributorRouter } from './distributor/router.ts';
import { exchangeRatesRouter } from './exchangeRates/router.ts';
import { exportRouter } from './export/router.ts';
import { fetchingRouter } from './fetching/router.ts';
import { fileRouter } from './file/router.ts';
import { fileStorageRouter } from './fileStorage/router.ts';
import { health } from './health.ts';
import { insightsRouter } from './insights/router.ts';
import { lensRouter } from './lens/router.ts';
import { lookupSalesTypeRouter } from './lookupSalesType/router.ts';
import { lookupSourceRouter } from './lookupSource/router.ts';
import { mappingRouter } from './mapping/router.ts';
import { marketRouter } from './market/router.ts';
import { musicalDetailsRouter } from './musicalDetails/router.ts';
import { musicEnrichmentRouter } from './musicEnrichment/router.ts';
import { organizationRouter } from './organization/router.ts';
import { payorRouter } from './payor/router.ts';
import { productRouter } from './product/router.ts';
import { rightsholderRouter } from './rightsholder/router.ts';
import { sourceGoldDataRouter } from './sourceGoldData/router.ts';
import { uploadRouter } from './upload/router.ts';
import { userRouter } from './user/router.ts';

export const appRouter = router({
  health,
  activity: activityRouter,
  apiKey: apiKeyRouter,
  chat: chatRouter,
  clustering: clusteringRouter,
  cube: cubeRouter,
  dataFreshness: dataFreshnessRouter,
  distributor: distributorRouter,
  exchangeRates: exchangeRatesRouter,
  export: exportRouter,
  fetching: fetchingRouter,
  file: fileRouter,
  fileStorage: fileStorageRouter,
  insights: insightsRouter,
  lens: lensRouter,
  lookupSalesType: lookupSalesTypeRouter,
  lookupSource: lookupSourceRouter,
  mapping: mappingRouter,
  market: marketRouter,
  musicalDetails: musicalDetailsRouter,
  musicEnrichment: musicEnrichmentRouter,
  organization: organizationRouter,
  payor: payorRouter,
  product: productRouter,
  rightsholder: rightsholderRouter,
  sourceGoldData: sourceGoldDataRouter,
  upload: uploadRouter,
  user: userRouter,
});

export type AppRouter = typeof appRouter;
