'use client';

import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { usePathname, useRouter } from 'next/navigation';
import { createContext, useContext, type ReactNode } from 'react';
import { useTRPC } from '@/client/trpc';
import type { Role } from '@/server/session';

const NAV = [
  { href: '/', label: 'Overview', icon: '◎' },
  { href: '/dags', label: 'DAGs', icon: '⋔' },
  { href: '/editor', label: 'Editor', icon: '✎' },
  { href: '/shards', label: 'Shards', icon: '⬡' },
  { href: '/fair-share', label: 'Fair share', icon: '◔' },
  { href: '/workers', label: 'Workers', icon: '▤' },
  { href: '/simulator', label: 'Simulator', icon: '⚗' },
];

const RoleContext = createContext<Role>('viewer');

/** The signed-in role, so pages can hide what a viewer may not do (the server refuses it anyway). */
export function useRole(): Role {
  return useContext(RoleContext);
}

export function Shell({ role, children }: { role: Role; children: ReactNode }) {
  const pathname = usePathname();
  const router = useRouter();
  const trpc = useTRPC();
  const signOut = useMutation(trpc.auth.signOut.mutationOptions({ onSuccess: () => router.replace('/signin') }));
  return (
    <RoleContext.Provider value={role}>
      <div className="shell">
        <nav className="sidebar" aria-label="Console">
          <Link href="/" className="brand">
            <img src="/icon.svg" alt="" width={26} height={26} />
            <span>fenceline</span>
          </Link>
          <ul>
            {NAV.map((item) => {
              const active = item.href === '/' ? pathname === '/' : pathname.startsWith(item.href);
              return (
                <li key={item.href}>
                  <Link href={item.href} className={active ? 'active' : ''} data-testid={`nav-${item.label.toLowerCase().replace(' ', '-')}`}>
                    <span className="nav-icon" aria-hidden>
                      {item.icon}
                    </span>
                    {item.label}
                  </Link>
                </li>
              );
            })}
          </ul>
          <div className="sidebar-foot">
            <span className={`role role-${role}`} data-testid="role">
              {role}
            </span>
            <button className="link" onClick={() => signOut.mutate()}>
              Sign out
            </button>
          </div>
        </nav>
        <main className="content">{children}</main>
      </div>
    </RoleContext.Provider>
  );
}
