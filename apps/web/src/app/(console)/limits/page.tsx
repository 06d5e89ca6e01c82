'use client';

import Link from 'next/link';
import { LimitsCard } from '@/components/limits-card';
import { PageHeader } from '@/components/ui';

/**
 * Resource limits on a page of their own, where an operator looks for them: each limit's
 * capacity, the units live leases hold, and the jobs waiting for it, per limit.
 */
export default function LimitsPage() {
  return (
    <>
      <PageHeader
        title="Limits"
        subtitle={
          <>
            Caps on external systems, shared by every DAG. How much of the pool each DAG may hold is on <Link href="/fair-share">Fair share</Link>.
          </>
        }
      />
      <LimitsCard />
    </>
  );
}
