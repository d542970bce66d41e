// cube.meta and GET /docs/cube-schema.json: the view as Cube's /v1/meta describes views, read
// from the model. Both serve this one object.
import { model } from './model.ts';
import { full } from './semantic.ts';
import type { QueryGranularity } from './semantic.ts';

const viewTitle = model.view.title;

const FORMAT_DESCRIPTION = {
  currency: { name: 'currency', specifier: '$,.2~f' },
  percent: { name: 'percent', specifier: '.2~f' },
  number: { name: 'number', specifier: ',.2~f' },
} as const;

export function measureAnnotation(name: string) {
  const m = model.measures.find((x) => x.name === name)!;
  return {
    title: `${viewTitle} ${m.title}`,
    shortTitle: m.title,
    description: m.description,
    type: m.type,
    ...(m.format ? { format: m.format } : {}),
    drillMembers: [] as string[],
    drillMembersGrouped: { measures: [] as string[], dimensions: [] as string[] },
  };
}

export function dimensionAnnotation(name: string, granularity?: QueryGranularity) {
  const d = model.dimensions.find((x) => x.name === name)!;
  return {
    title: `${viewTitle} ${d.title}`,
    shortTitle: d.title,
    description: d.description,
    type: d.type,
    ...(granularity
      ? { granularity: { name: granularity, title: granularity, interval: `1 ${granularity}` } }
      : {}),
  };
}

function buildMeta() {
  return {
    cubes: [
      {
        name: model.view.name,
        type: 'view',
        title: viewTitle,
        description: model.view.description,
        isVisible: true,
        public: true,
        connectedComponent: 1,
        measures: model.measures.map((m) => ({
          name: full(m.name),
          title: `${viewTitle} ${m.title}`,
          shortTitle: m.title,
          description: m.description,
          type: m.type,
          aggType: m.aggType,
          ...(m.format ? { format: m.format } : {}),
          formatDescription: FORMAT_DESCRIPTION[m.format ?? 'number'],
          cumulative: false,
          cumulativeTotal: false,
          drillMembers: [],
          drillMembersGrouped: { measures: [], dimensions: [] },
          isVisible: true,
          public: true,
        })),
        dimensions: model.dimensions.map((d) => ({
          name: full(d.name),
          title: `${viewTitle} ${d.title}`,
          shortTitle: d.title,
          description: d.description,
          type: d.type,
          ...(d.type === 'number' ? { formatDescription: FORMAT_DESCRIPTION.number } : {}),
          suggestFilterValues: true,
          isVisible: true,
          public: true,
          primaryKey: false,
        })),
        segments: [],
        hierarchies: [],
        folders: [],
        nestedFolders: [],
      },
    ],
  };
}

/** The view's description for cube.meta and cube-schema.json. */
export const cubeMeta = buildMeta();
