import { createBackfill, listBackfills } from '@/server/api/endpoints';

// Every answer reflects the store now; nothing here may be cached or prerendered.
export const dynamic = 'force-dynamic';

export const GET = listBackfills.handler;
export const POST = createBackfill.handler;
