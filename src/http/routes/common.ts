import { z } from 'zod';

export const workspaceParams = z.object({ wsId: z.string().describe('Workspace id (ws_…).') });
