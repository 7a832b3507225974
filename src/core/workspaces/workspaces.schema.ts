import { z } from 'zod';

export const createWorkspaceInputSchema = z.strictObject({
  name: z.string().trim().min(1).max(100),
});

export type CreateWorkspaceInput = z.infer<typeof createWorkspaceInputSchema>;
