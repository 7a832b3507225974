import { z } from 'zod';

export const workspaceIdSchema = z.string().regex(/^ws_[0-9a-z]{20}$/, 'must be a workspace id (ws_…)');

export const createWorkspaceInputSchema = z.strictObject({
  name: z.string().trim().min(1).max(100),
});

export type CreateWorkspaceInput = z.infer<typeof createWorkspaceInputSchema>;
