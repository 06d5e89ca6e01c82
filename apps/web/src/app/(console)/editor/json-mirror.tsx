'use client';

import { useEffect, useRef, useState } from 'react';
import { prettySpec } from '@/components/diff';
import { emptySpec, toDraft, type DraftSpec } from './draft';

/** Reads the JSON view's text as a spec, or says why it cannot be applied to the graph. */
export function parseSpecText(text: string): { ok: true; spec: DraftSpec } | { ok: false; message: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `JSON: ${(err as Error).message}` };
  }
  return toDraft(parsed);
}

/**
 * The JSON view's text, kept in step with the spec both ways: it follows the graph, except
 * while the author is typing in it, and what the author types applies to the graph as soon
 * as it reads as a spec.
 */
function useJsonMirror(spec: DraftSpec, setSpec: (next: DraftSpec) => void) {
  const [text, setText] = useState(() => prettySpec(emptySpec()));
  const [error, setError] = useState<string | null>(null);
  const focused = useRef(false);
  useEffect(() => {
    if (!focused.current) {
      setText(prettySpec(spec));
      setError(null);
    }
  }, [spec]);
  const onChange = (next: string) => {
    setText(next);
    const draft = parseSpecText(next);
    setError(draft.ok ? null : draft.message);
    if (draft.ok) setSpec(draft.spec);
  };
  const onFocus = () => {
    focused.current = true;
  };
  const onBlur = () => {
    focused.current = false;
    if (!error) setText(prettySpec(spec));
  };
  return { text, error, onChange, onFocus, onBlur };
}

/** The spec as editable JSON beside the canvas. */
export function JsonMirror({ spec, setSpec }: { spec: DraftSpec; setSpec: (next: DraftSpec) => void }) {
  const json = useJsonMirror(spec, setSpec);
  return (
    <section className="card json-card">
      <div className="card-head">
        <h2 id="spec-json-title">Spec (JSON, editable)</h2>
        {json.error ? <span className="badge state-failed">not applied</span> : <span className="muted small">edits apply to the graph as you type</span>}
      </div>
      <textarea
        className="json"
        data-testid="spec-json"
        aria-labelledby="spec-json-title"
        spellCheck={false}
        value={json.text}
        onFocus={json.onFocus}
        onBlur={json.onBlur}
        onChange={(e) => json.onChange(e.target.value)}
      />
      {json.error ? (
        <div className="inline-error" data-testid="json-error">
          {json.error}
        </div>
      ) : null}
    </section>
  );
}
