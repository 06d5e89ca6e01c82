'use client';

import type { ReactNode } from 'react';

export function PageHeader({ title, subtitle, actions }: { title: ReactNode; subtitle?: ReactNode; actions?: ReactNode }) {
  return (
    <header className="page-header">
      <div>
        <h1>{title}</h1>
        {subtitle ? <p className="subtitle">{subtitle}</p> : null}
      </div>
      {actions ? <div className="actions">{actions}</div> : null}
    </header>
  );
}

export function Stat({ label, value, hint, tone, testId }: { label: string; value: ReactNode; hint?: ReactNode; tone?: 'good' | 'warn' | 'bad'; testId?: string }) {
  return (
    <div className={`stat ${tone ?? ''}`} data-testid={testId}>
      <div className="stat-label">{label}</div>
      <div className="stat-value">{value}</div>
      {hint ? <div className="stat-hint">{hint}</div> : null}
    </div>
  );
}

export function Card({ title, children, actions, className }: { title?: ReactNode; children: ReactNode; actions?: ReactNode; className?: string }) {
  return (
    <section className={`card ${className ?? ''}`}>
      {title || actions ? (
        <div className="card-head">
          {title ? <h2>{title}</h2> : <span />}
          {actions}
        </div>
      ) : null}
      {children}
    </section>
  );
}

export function StateBadge({ state, testId }: { state: string; testId?: string }) {
  return (
    <span className={`badge state-${state}`} data-testid={testId} data-state={state}>
      {state.replace('_', ' ')}
    </span>
  );
}

export function LiveDot({ fetching }: { fetching: boolean }) {
  // A picture of a state, so it is an image with a name; a bare span's aria-label is read by nothing.
  return <span className={`live-dot ${fetching ? 'fetching' : ''}`} title="live: refreshed every second" role="img" aria-label="live: refreshed every second" />;
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}
