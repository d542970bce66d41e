// What the export procedures share: the export id input.
import { z } from 'zod';

export const exportIdField = z.uuid().describe('the export id (export.trigger answers it)');
