import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import type { ReactNode } from 'react';
import { Shell } from '@/components/shell';
import { roleForSession, SESSION_COOKIE } from '@/server/session';

// Every console page depends on who is signed in and on the store now.
export const dynamic = 'force-dynamic';

/** The console is closed to anyone without a session: pages redirect, procedures refuse. */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const role = roleForSession((await cookies()).get(SESSION_COOKIE)?.value);
  if (role === null) redirect('/signin');
  return <Shell role={role}>{children}</Shell>;
}
