'use client';

import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { usePathname, useRouter } from 'next/navigation';
import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { useTRPC } from '@/client/trpc';
import { roleAtLeast, type Role } from '@fenceline/core';
import { ZoneSwitch } from './zone-switch';

const NAV = [
  { href: '/', label: 'Overview', icon: '◎' },
  { href: '/dags', label: 'DAGs', icon: '⋔' },
  { href: '/runs', label: 'Runs', icon: '▶' },
  { href: '/editor', label: 'Editor', icon: '✎' },
  { href: '/shards', label: 'Shards', icon: '⬡' },
  { href: '/fair-share', label: 'Fair share', icon: '◔' },
  { href: '/limits', label: 'Limits', icon: '⧗' },
  { href: '/workers', label: 'Workers', icon: '▤' },
  { href: '/notifications', label: 'Notifications', icon: '✉' },
  { href: '/simulator', label: 'Simulator', icon: '⚗' },
  { href: '/audit', label: 'Audit', icon: '☰' },
  { href: '/tokens', label: 'Tokens', icon: '⚷' },
  { href: '/reference', label: 'API reference', icon: '⌘' },
];

/** Pages only an admin is shown (the server refuses their procedures to anyone else). */
const ADMIN_NAV = [{ href: '/users', label: 'Users', icon: '☺' }];

const RoleContext = createContext<Role>('viewer');

/** The signed-in role, so pages can hide what a viewer may not do (the server refuses it anyway). */
export function useRole(): Role {
  return useContext(RoleContext);
}

/** Whether the role may edit, trigger and pause (an operator or an admin). */
export function canOperate(role: Role): boolean {
  return roleAtLeast(role, 'operator');
}

export function Shell({ role, name, children }: { role: Role; name: string; children: ReactNode }) {
  const pathname = usePathname();
  const router = useRouter();
  const trpc = useTRPC();
  const signOut = useMutation(trpc.auth.signOut.mutationOptions({ onSuccess: () => router.replace('/signin') }));
  // On a narrow screen the navigation is a drawer behind the menu button; on a wide one it is always shown and this is ignored.
  const [menuOpen, setMenuOpen] = useState(false);

  // Whatever moved the page on (a link in the drawer, the back button, a link in the page), the drawer must not stay over it.
  useEffect(() => setMenuOpen(false), [pathname]);

  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setMenuOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [menuOpen]);

  return (
    <RoleContext.Provider value={role}>
      <div className={`shell ${menuOpen ? 'menu-open' : ''}`}>
        <header className="topbar">
          <button
            type="button"
            className="menu-button"
            aria-expanded={menuOpen}
            aria-controls="console-nav"
            aria-label={menuOpen ? 'Close the menu' : 'Open the menu'}
            data-testid="menu-button"
            onClick={() => setMenuOpen((open) => !open)}
          >
            <span aria-hidden>{menuOpen ? '✕' : '☰'}</span>
          </button>
          <Link href="/" className="brand">
            <img src="/icon.svg" alt="" width={22} height={22} />
            <span>fenceline</span>
          </Link>
        </header>
        {menuOpen ? <div className="menu-backdrop" aria-hidden onClick={() => setMenuOpen(false)} /> : null}
        <nav id="console-nav" className="sidebar" aria-label="Console" data-testid="console-nav">
          <Link href="/" className="brand sidebar-brand">
            <img src="/icon.svg" alt="" width={26} height={26} />
            <span>fenceline</span>
          </Link>
          <ul>
            {(role === 'admin' ? [...NAV, ...ADMIN_NAV] : NAV).map((item) => {
              const active = item.href === '/' ? pathname === '/' : pathname.startsWith(item.href);
              return (
                <li key={item.href}>
                  <Link
                    href={item.href}
                    className={active ? 'active' : ''}
                    aria-current={active ? 'page' : undefined}
                    data-testid={`nav-${item.label.toLowerCase().replace(' ', '-')}`}
                    // A link to the page already shown changes no path, so the drawer is closed here too.
                    onClick={() => setMenuOpen(false)}
                  >
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
            <ZoneSwitch />
            <div className="sidebar-account">
              <span className="muted" data-testid="user-name">
                {name}
              </span>
              <span className={`role role-${role}`} data-testid="role">
                {role}
              </span>
              <button className="link" data-testid="sign-out" onClick={() => signOut.mutate()}>
                Sign out
              </button>
            </div>
          </div>
        </nav>
        <main className="content">{children}</main>
      </div>
    </RoleContext.Provider>
  );
}
