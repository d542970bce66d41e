export const fileVariants = ['normalized', 'trimmed', 'original', 'single', 'removed', 'standardized', 'original-excel'] as const;
export type FileVariant = (typeof fileVariants)[number];
