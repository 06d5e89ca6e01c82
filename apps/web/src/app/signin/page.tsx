'use client';

import { useMutation } from '@tanstack/react-query';
import { useRouter, useSearchParams } from 'next/navigation';
import { Suspense, useState } from 'react';
import { useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';

function SignInForm() {
  const trpc = useTRPC();
  const router = useRouter();
  const params = useSearchParams();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation(
    trpc.auth.signIn.mutationOptions({
      onSuccess: () => {
        const next = params.get('next');
        // Only same-site paths, so a crafted link cannot bounce a fresh session elsewhere.
        router.replace(next && next.startsWith('/') && !next.startsWith('//') ? next : '/');
        router.refresh();
      },
    }),
  );
  return (
    <form
      className="card narrow signin"
      onSubmit={(e) => {
        e.preventDefault();
        signIn.mutate({ name, password });
      }}
    >
      <div className="brand big">
        <img src="/icon.svg" alt="" width={36} height={36} />
        <span>fenceline</span>
      </div>
      <h1>Sign in to the console</h1>
      <p className="muted">
        Sign in with your user name and password. On a fresh <code>npm start</code>, the first admin&apos;s are printed in its banner.
      </p>
      <label className="field">
        <span>User name</span>
        <input data-testid="signin-name" autoComplete="username" autoCapitalize="none" spellCheck={false} autoFocus value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label className="field">
        <span>Password</span>
        <input data-testid="signin-password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} />
      </label>
      <ErrorBox error={signIn.error} />
      <button className="primary" data-testid="signin-submit" disabled={signIn.isPending || name === '' || password === ''}>
        {signIn.isPending ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

export default function SignInPage() {
  return (
    <main className="center-page">
      <Suspense>
        <SignInForm />
      </Suspense>
    </main>
  );
}
