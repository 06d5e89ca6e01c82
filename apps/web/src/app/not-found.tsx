import Link from 'next/link';

export default function NotFound() {
  return (
    <main className="center-page">
      <div className="card narrow" data-testid="page-not-found">
        <h1>Not found</h1>
        <p>This page does not exist in the console.</p>
        <Link href="/">Back to the overview</Link>
      </div>
    </main>
  );
}
