import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import type { ReactNode } from 'react';
import { Shell } from '@/components/shell';
import { principalOf } from '@/server/session';

// Every console page depends on who is signed in and on the store now.
export const dynamic = 'force-dynamic';

/** The console is closed to anyone without a live session: pages redirect, procedures refuse. */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const { principal } = await principalOf(await headers());
  if (principal === null) redirect('/signin');
  return (
    <Shell role={principal.role} name={principal.user.name}>
      {children}
    </Shell>
  );
}
