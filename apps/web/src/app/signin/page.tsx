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
  const [token, setToken] = useState('');
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
        signIn.mutate({ token });
      }}
    >
      <div className="brand big">
        <img src="/icon.svg" alt="" width={36} height={36} />
        <span>fenceline</span>
      </div>
      <h1>Sign in to the console</h1>
      <p className="muted">
        Paste the operator token that <code>npm start</code> printed, or a viewer token for read-only access.
      </p>
      <label className="field">
        <span>Token</span>
        <input data-testid="signin-token" type="password" autoComplete="current-password" autoFocus value={token} onChange={(e) => setToken(e.target.value)} />
      </label>
      <ErrorBox error={signIn.error} />
      <button className="primary" data-testid="signin-submit" disabled={signIn.isPending || token === ''}>
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
