export const fileVariants = [
  'normalized',
  'trimmed',
  'original',
  'single',
  'removed',
  'standardized',
  'original-excel',
] as const;
