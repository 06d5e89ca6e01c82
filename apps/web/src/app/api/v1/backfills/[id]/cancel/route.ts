import { cancelBackfill } from '@/server/api/endpoints';

// Every answer reflects the store now; nothing here may be cached or prerendered.
export const dynamic = 'force-dynamic';

export const POST = cancelBackfill.handler;
