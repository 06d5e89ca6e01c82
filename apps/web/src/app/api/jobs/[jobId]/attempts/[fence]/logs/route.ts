import { attemptLogsResponse } from '@/server/attempt-logs';

// Every answer reflects the store now; nothing here may be cached or prerendered.
export const dynamic = 'force-dynamic';

export async function GET(req: Request, context: { params: Promise<{ jobId: string; fence: string }> }): Promise<Response> {
  return attemptLogsResponse(req, await context.params);
}
